-- GET one fixed URL (kapi's single-object GET and LIST, the bare app's GET).
--
-- No request() function on purpose: wrk then sends one pre-built request
-- over and over, its cheapest mode, so the generator stays far from being
-- the bottleneck.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")
