local x
for i = 1, 1000 do for j = 1, D do break end end
