-- Shared by the scripts that build their own requests: each thread learns its
-- number (thread_id, 0, 1, ...) before the run, so that the names and sequence
-- strings it builds differ from every other thread's; the run's numbers are
-- printed as report.lua does.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

local threads = 0

function setup(thread)
   thread:set("thread_id", threads)
   threads = threads + 1
end
