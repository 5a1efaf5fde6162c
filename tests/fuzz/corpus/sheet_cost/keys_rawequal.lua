local t = {}
for i = 1, 64 do t[T[i]] = i end
local x
for i = 1, 1000 do x = rawequal(L, M) end
