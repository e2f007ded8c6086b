-- wrk script of the harness's closed-loop loader (libs/shared/harness/src/load/closed-loop.ts).
--   wrk ... -s wrk-report.lua http://127.0.0.1:PORT/ -- [paths-file]
-- With a paths file (one path per line, e.g. "/abc123", optionally followed by headers after tabs:
-- "/abc123\tX-Forwarded-For: 203.0.113.7"), each thread cycles through the paths (requests are
-- pre-formatted in init, so the per-request Lua cost is a table lookup).
-- Without it wrk sends the URL's path as a static request (no per-request Lua at all).
-- done() prints one JSON line prefixed with "WRK_JSON " that closed-loop.ts parses.

local paths_file = nil

function init(args)
  paths_file = args[1]
  if paths_file ~= nil and paths_file ~= "" then
    local reqs = {}
    for line in io.lines(paths_file) do
      if line ~= "" then
        local path, rest = line:match("^([^\t]*)(.*)$")
        local headers = {}
        for name, value in rest:gmatch("\t([^:\t]+):%s*([^\t]*)") do headers[name] = value end
        reqs[#reqs + 1] = wrk.format("GET", path, headers)
      end
    end
    if #reqs == 0 then error("no paths in " .. paths_file) end
    -- each thread starts at a different offset so threads do not walk in lock step
    local i = math.random(#reqs) - 1
    request = function()
      i = i % #reqs + 1
      return reqs[i]
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"stdev":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
