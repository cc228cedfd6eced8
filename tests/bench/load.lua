-- wrk script for tests/bench/load.sh: POSTs the JSON object in $LOAD_BODY. With
-- LOAD_SEED=1 it adds a "seed" field that differs on every request (thread number *
-- 10^9 + a per-thread counter), so every completion samples a different text.
-- done() prints one LOADRESULT line that load.sh parses (times in microseconds; wrk
-- counts a response with status >= 400 under "status"; the server sends no 1xx/3xx).
local body = os.getenv("LOAD_BODY") or error("LOAD_BODY is not set")
wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local next_id = 0
function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
end

if os.getenv("LOAD_SEED") == "1" then
    local n = 0
    local prefix = body:gsub("}%s*$", "") -- the object without its closing brace
    function request()
        n = n + 1
        return wrk.format(nil, nil, nil, string.format('%s,"seed":%d}', prefix, id * 1000000000 + n))
    end
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        "LOADRESULT requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
        e.connect, e.read, e.write, e.status, e.timeout))
end
