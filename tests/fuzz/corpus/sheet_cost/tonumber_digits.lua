local x
for i = 1, 1000 do x = tonumber(D) end
