-- bad: protocol given a string
protocol "bad-sheet"
