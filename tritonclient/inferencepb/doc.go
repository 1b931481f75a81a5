// Package inferencepb holds the Go types and gRPC stubs generated from tritonclient/proto: the
// KServe v2 / Triton inference protocol and Triton's model configuration, restricted to what
// ocrgate uses. Only tritonclient and its test server import it; the rest of ocrgate talks to
// Triton through tritonclient.
//
// Do not edit the .pb.go files: change tritonclient/proto and run scripts/gen_proto.sh.
package inferencepb
