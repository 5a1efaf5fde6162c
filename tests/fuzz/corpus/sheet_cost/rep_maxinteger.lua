local x = string.rep("ab", math.maxinteger)
