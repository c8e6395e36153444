<?php
// Never fails: a second class.
namespace Demo\Tests;

use PHPUnit\Framework\TestCase;

final class SearchTest extends TestCase
{
    public function testFindsNothingInAnEmptyIndex(): void
    {
        $this->assertFalse(array_search(1, []));
    }
}
