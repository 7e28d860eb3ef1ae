module kiln.bench/peer-go

go 1.21
