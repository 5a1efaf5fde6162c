local x
for i = 1, 1000 do x = utf8.len(L) end
