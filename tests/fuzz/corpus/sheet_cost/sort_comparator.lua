table.sort(T, function(a, b) return a < b end)
