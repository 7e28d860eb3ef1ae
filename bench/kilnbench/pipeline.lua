-- Pipelined requests for wrk: each write carries `depth` copies of the request
-- (default 16, TechEmpower's depth). Usage: wrk ... -s pipeline.lua URL -- 16
init = function(args)
  local depth = tonumber(args[1]) or 16
  local batch = {}
  for i = 1, depth do
    batch[i] = wrk.format()
  end
  req = table.concat(batch)
end

request = function()
  return req
end
