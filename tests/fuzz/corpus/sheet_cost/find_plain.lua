local x
for i = 1, 1000 do x = string.find(L, M, 1, true) end
