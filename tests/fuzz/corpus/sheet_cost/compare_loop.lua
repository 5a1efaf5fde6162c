local x
for i = 1, 1000 do x = L < M end
