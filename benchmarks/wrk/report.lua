-- Shared by every wrk script here: print the run's numbers as one JSON line.
--
-- Parsing wrk's human-readable summary would lose precision (it rounds to
-- two digits and switches units); done() gets the exact counters and the
-- latency histogram, in microseconds.  run.py looks for the WRK_RESULT marker.

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'WRK_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,'
         .. '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},'
         .. '"latency_us":{"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
      summary.requests, summary.duration, summary.bytes,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency.mean, latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.max))
end
