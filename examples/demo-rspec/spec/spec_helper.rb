# flaky's RSpec demo: the run counter that makes the flaky example fail on
# every other run (deterministic across runs), $DEMO_COUNTER or
# .demo-runs in the project.
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))

def next_run
  path = ENV.fetch("DEMO_COUNTER", File.expand_path("../.demo-runs", __dir__))
  n = (File.read(path).to_i rescue 0) + 1
  File.write(path, n.to_s)
  n
end
