-- wrk: POST a new object per request. Arguments (after --): the collection's path, a file
-- holding the JSON body with __NAME__ wherever the object's name goes, and a name prefix.
-- Names are prefix-thread-counter, so concurrent threads and runs never collide.
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  path, prefix = args[1], args[3]
  local file = assert(io.open(args[2], "r"))
  template = file:read("*a")
  file:close()
  counter = 0
end

function request()
  counter = counter + 1
  local name = prefix .. "-" .. tid .. "-" .. counter
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, (template:gsub("__NAME__", name)))
end
