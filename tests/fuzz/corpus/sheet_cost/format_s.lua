local x
for i = 1, 1000 do x = string.format("%s", L) end
