local x
for i = 1, 1000 do x = math.floor(D) + math.abs(D) end
