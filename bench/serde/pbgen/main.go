// Command pbgen is protoc with protoc-gen-go, in one process, for the
// benchmark's Protobuf peer: protoc is not installed here, so it compiles
// the .proto files named on its command line with protocompile (the
// compiler buf uses) and hands them to protoc-gen-go's own code generator,
// writing each <name>.pb.go next to its <name>.proto with protoc-gen-go's
// standard header. Run by go generate in bench/serde/pbcompare:
//
//	go run ../pbgen -go_package github.com/streamgen/streamgen/bench/serde/pbcompare serde.proto
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/bufbuild/protocompile"
	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	goPackage := flag.String("go_package", "", "the Go import path of the generated files (protoc-gen-go's M option for every file named)")
	flag.Parse()
	if err := run(*goPackage, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "pbgen:", err)
		os.Exit(1)
	}
}

// run compiles the files and generates their Go code, as protoc
// --go_out=. --go_opt=paths=source_relative would.
func run(goPackage string, names []string) error {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{})}
	files, err := c.Compile(context.Background(), names...)
	if err != nil {
		return err
	}
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: names, Parameter: new(string)}
	*req.Parameter = "paths=source_relative"
	for _, n := range names {
		*req.Parameter += ",M" + n + "=" + goPackage
	}
	seen := map[string]bool{}
	for _, f := range files {
		req.ProtoFile = appendWithDeps(req.ProtoFile, f, seen)
	}
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		return err
	}
	for _, f := range plugin.Files {
		if f.Generate {
			gengo.GenerateFile(plugin, f)
		}
	}
	plugin.SupportedFeatures = gengo.SupportedFeatures
	resp := plugin.Response()
	if resp.Error != nil {
		return fmt.Errorf("protoc-gen-go: %s", resp.GetError())
	}
	for _, out := range resp.File {
		if err := os.WriteFile(out.GetName(), []byte(out.GetContent()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// appendWithDeps appends f's descriptor after those of its imports, which
// a CodeGeneratorRequest lists first.
func appendWithDeps(out []*descriptorpb.FileDescriptorProto, f protoreflect.FileDescriptor, seen map[string]bool) []*descriptorpb.FileDescriptorProto {
	if seen[f.Path()] {
		return out
	}
	seen[f.Path()] = true
	imports := f.Imports()
	for i := 0; i < imports.Len(); i++ {
		out = appendWithDeps(out, imports.Get(i).FileDescriptor, seen)
	}
	return append(out, protodesc.ToFileDescriptorProto(f))
}
