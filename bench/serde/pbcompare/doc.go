// Package pbcompare is the Protobuf peer of the serde benchmarks:
// google.golang.org/protobuf's generated code (serde.pb.go, by
// protoc-gen-go) for serde.proto, the .proto `streamgen schema protobuf`
// prints for bench/serde's spec. protoc is not installed here, so pbgen
// compiles the file with protocompile and runs protoc-gen-go's generator in
// process; go generate ./bench/serde/pbcompare regenerates both files.
package pbcompare

//go:generate sh -c "go run github.com/streamgen/streamgen/cmd/streamgen schema protobuf ../streamgen.yaml > serde.proto"
//go:generate go run ../pbgen -go_package github.com/streamgen/streamgen/bench/serde/pbcompare serde.proto
