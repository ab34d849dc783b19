"""Generated protobuf and gRPC code for arena.v1 (scripts/gen_proto.py). Never edit by hand."""
