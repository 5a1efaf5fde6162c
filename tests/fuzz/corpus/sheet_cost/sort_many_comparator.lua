local u = {}
for i = 1, 100000 do u[i] = T[i % 64 + 1] end
table.sort(u, function(a, b) return a > b end)
