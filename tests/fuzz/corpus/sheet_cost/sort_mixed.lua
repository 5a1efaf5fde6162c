table.sort(T, function(a, b) return #a < #b or a < b end)
local u = {} for i = 1, 200 do u[i] = T[i % 64 + 1] end table.sort(u)
