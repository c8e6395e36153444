<?php
// A hand-written autoloader (no Composer here) and the run counter that
// makes the flaky test fail on every other run: $DEMO_COUNTER, else
// .demo-runs in the project.
spl_autoload_register(function (string $class): void {
    if (strncmp($class, 'Demo\\', 5) === 0) {
        require __DIR__ . '/../src/' . substr($class, 5) . '.php';
    }
});

function demo_next_run(): int
{
    $path = getenv('DEMO_COUNTER') ?: __DIR__ . '/../.demo-runs';
    $n = (int) @file_get_contents($path) + 1;
    file_put_contents($path, (string) $n);
    return $n;
}
