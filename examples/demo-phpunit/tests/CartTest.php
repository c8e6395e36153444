<?php
// A demo with known outcomes: testRetriesPayment fails on every other run,
// testTalksToLegacyApi always, the rest never.
namespace Demo\Tests;

use Demo\Cart;
use PHPUnit\Framework\TestCase;

final class CartTest extends TestCase
{
    public function testAddsItems(): void
    {
        $this->assertSame(3, Cart::total([1, 2]));
    }

    public function testRetriesPayment(): void
    {
        $run = demo_next_run();
        $this->assertSame(0, $run % 2, "payment gateway timed out (run $run)");
    }

    public function testTalksToLegacyApi(): void
    {
        $this->assertSame(2, Cart::total([1]), 'the legacy API answered 1');
    }

    public function testRefunds(): void
    {
        $this->markTestSkipped('refunds are not written yet');
    }

    /** @dataProvider counts */
    public function testCounts(int $n): void
    {
        $this->assertSame($n, Cart::total([$n]));
    }

    public function counts(): array
    {
        return ['one item' => [1], 'two items' => [2]];
    }

    /** @dataProvider prices */
    public function testPrices(int $p): void
    {
        $this->assertGreaterThan(0, $p);
    }

    public function prices(): array
    {
        return [[1], [2]];
    }
}
