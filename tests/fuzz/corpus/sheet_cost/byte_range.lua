local x
for i = 1, 1000 do x = string.byte(L, 1, 100000) end
