table.sort(T)
