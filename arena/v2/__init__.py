"""Generated protobuf and gRPC code for arena.v2 (scripts/gen_proto.py). Never edit by hand."""
