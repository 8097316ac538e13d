-- flood.lua, for Pktgen-DPDK 23.06.1 (built with -Denable_lua=true) on DPDK 22.11
--
-- Runs one of the .pkt floods of this folder bounded in time and prints
-- what left the port, so that a flood can run unattended next to ewykd
-- (README.md here: Pktgen on an AF_XDP port into ewykd's bridge, or on a
-- NIC across a cable; not as ewykd's memif client, which 22.11 refuses):
--
--   FLOOD=syn-flood.pkt SECONDS=10 SET="set 0 rate 1" \
--     pktgen EAL-OPTIONS -- -P -T -m "[1:2].0" -f pktgen-scripts/flood.lua
--
-- FLOOD    the .pkt file (relative to this folder or absolute)
-- SECONDS  longest run (default 10); the .pkt's own count may end it first
-- SET      more commands, separated by ';', applied after the .pkt and
--          before the start: the attacked connection's port
--          ("set 0 sport 43512"), ewykd's MAC ("set 0 dst mac ..."), a rate
--
-- Read ewykd's answer on its telemetry socket meanwhile (each .pkt names the
-- counters to watch). tests/integration/test_floods.py runs this file
-- against a stand-in of Pktgen's Lua API whose counters lag as Pktgen's do.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local flood = os.getenv("FLOOD") or error("FLOOD=file.pkt is required")
local seconds = tonumber(os.getenv("SECONDS") or "10")
local extra = os.getenv("SET") or ""

if flood:sub(1, 1) ~= "/" then
    flood = here .. flood
end
if not seconds or seconds <= 0 or seconds > 3600 then
    error("SECONDS: 1 to 3600")
end

-- Pktgen's port counters (pktgen.portStats) are a snapshot its stats timer
-- takes once a second: read as the flood ends they lag behind the port
-- (0 frames of 14 550 when the flood took less than a second). A snapshot
-- that stayed the same for longer than the timer's period was taken after
-- the last frame had left: the port's own count.
local PERIOD_MS, POLL_MS, LONGEST_MS = 1000, 100, 10000

local function port_counters()
    local last = pktgen.portStats("0", "port")[0]
    local still, waited = 0, 0
    while still <= PERIOD_MS and waited < LONGEST_MS do
        pktgen.delay(POLL_MS)
        waited = waited + POLL_MS
        local now = pktgen.portStats("0", "port")[0]
        if now.opackets == last.opackets then
            still = still + POLL_MS
        else
            still = 0
        end
        last = now
    end
    if still <= PERIOD_MS then
        print("flood.lua: the port's counters still move after 10 s: figures may lag")
    end
    return last
end

-- The .pkt without its start, then SET: Pktgen loads the copy.
local src = assert(io.open(flood, "r"))
local copy_path = os.tmpname()
local copy = assert(io.open(copy_path, "w"))
local count = 0
for line in src:lines() do
    if not line:match("^%s*start") and not line:match("^%s*str%s*$") then
        copy:write(line, "\n")
    end
    count = tonumber(line:match("^%s*set%s+0%s+count%s+(%d+)")) or count
end
src:close()
for cmd in extra:gmatch("[^;]+") do
    copy:write(cmd:match("^%s*(.-)%s*$"), "\n")
    count = tonumber(cmd:match("^%s*set%s+0%s+count%s+(%d+)")) or count
end
copy:close()

pktgen.clr()
pktgen.load(copy_path)
os.remove(copy_path)

local before = port_counters()
print(string.format("flood.lua: %s for %d s at most", flood, seconds))
pktgen.start("0")
local waited = 0
while waited < seconds * 1000 and pktgen.isSending("0")[0] == "y" do
    pktgen.delay(100)
    waited = waited + 100
end
pktgen.stop("0")

local after = port_counters()
print(string.format("flood.lua: sent %d of %s frames in %.1f s; received %d, rx errors %d, missed %d",
      after.opackets - before.opackets, count > 0 and tostring(count) or "unbounded",
      waited / 1000, after.ipackets - before.ipackets, after.ierrors - before.ierrors,
      after.imissed - before.imissed))
