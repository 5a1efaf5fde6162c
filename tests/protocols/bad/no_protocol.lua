-- bad: protocol is never called
local x = 1
