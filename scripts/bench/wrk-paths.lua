-- wrk script: GET a random path from the file named by the PATHS environment
-- variable (or, with BODIES naming a file of one JSON body a line, POST a
-- random body to the first path), with the bearer key in KEY; prints latency percentiles in
-- microseconds and the request rate on one line for the bench scripts. With
-- ORDER=seq the paths are taken in the file's order, round and round (a
-- warm-up that touches every path once in as few requests as possible).
local paths = {}
local bodies = {}
local seq = os.getenv("ORDER") == "seq"
local next_path = 0

init = function(args)
  for line in io.lines(os.getenv("PATHS")) do
    if #line > 0 then paths[#paths + 1] = line end
  end
  local key = os.getenv("KEY")
  if key and #key > 0 then wrk.headers["Authorization"] = "Bearer " .. key end
  local bf = os.getenv("BODIES")
  if bf and #bf > 0 then
    for line in io.lines(bf) do
      if #line > 0 then bodies[#bodies + 1] = line end
    end
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
  end
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end

request = function()
  if #bodies > 0 then
    return wrk.format("POST", paths[1], nil, bodies[math.random(#bodies)])
  end
  if seq then
    next_path = next_path % #paths + 1
    return wrk.format("GET", paths[next_path])
  end
  return wrk.format("GET", paths[math.random(#paths)])
end

done = function(summary, latency, requests)
  local secs = summary.duration / 1e6
  io.write(string.format("RESULT rps=%.1f p50_us=%d p99_us=%d max_us=%d requests=%d errors=%d non2xx=%d\n",
    summary.requests / secs, latency:percentile(50), latency:percentile(99), latency.max,
    summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
