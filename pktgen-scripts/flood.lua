-- flood.lua, for Pktgen-DPDK 23.06.1 (built with -Denable_lua=true) on DPDK 22.11
--
-- Runs one of the .pkt floods of this folder bounded in time and prints
-- what was sent, so that a flood can run unattended next to ewykd:
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
-- counters to watch).

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

-- The .pkt without its start, then SET: Pktgen loads the copy.
local src = assert(io.open(flood, "r"))
local copy_path = os.tmpname()
local copy = assert(io.open(copy_path, "w"))
for line in src:lines() do
    if not line:match("^%s*start") and not line:match("^%s*str%s*$") then
        copy:write(line, "\n")
    end
end
src:close()
for cmd in extra:gmatch("[^;]+") do
    copy:write(cmd:match("^%s*(.-)%s*$"), "\n")
end
copy:close()

pktgen.clr()
pktgen.load(copy_path)
os.remove(copy_path)

print(string.format("flood.lua: %s for %d s at most", flood, seconds))
pktgen.start("0")
local waited = 0
while waited < seconds * 1000 and pktgen.isSending("0")[0] == "y" do
    pktgen.delay(100)
    waited = waited + 100
end
pktgen.stop("0")
pktgen.delay(200)

local stats = pktgen.portStats("0", "port")[0]
print(string.format("flood.lua: sent %d frames in %.1f s; received %d, rx errors %d, missed %d",
      stats.opackets, waited / 1000, stats.ipackets, stats.ierrors, stats.imissed))
