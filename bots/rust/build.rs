// Generates the protocol's Rust code (prost) into cargo's OUT_DIR: the envelope arena/v2/arena.proto and every
// game's arena/games/<game>/<game>.proto found, with protoc (the protobuf-compiler package; or PROTOC=path).
// src/main.rs includes them all through OUT_DIR/protocol.rs, as nested modules named after their packages:
// arena::v2, arena::cabanga::v1, arena::lama::v1, ... google.protobuf.Any is prost_types::Any.
use std::path::{Path, PathBuf};

fn main() {
    // Where the .proto files are: proto/ beside this file holds them all (a bot made by `arena new`); else the
    // arena's own source tree (bots/rust in it) has the envelope under proto/ and the games under its root.
    let (envelope_root, games_root) = if Path::new("proto/arena/v2/arena.proto").is_file() {
        (PathBuf::from("proto"), PathBuf::from("proto"))
    } else {
        (PathBuf::from("../../proto"), PathBuf::from("../.."))
    };
    let mut protos = vec![envelope_root.join("arena/v2/arena.proto")];
    let games = games_root.join("arena/games");
    let mut names: Vec<_> = std::fs::read_dir(&games)
        .map(|dir| dir.filter_map(|entry| entry.ok()).map(|entry| entry.file_name()).collect())
        .unwrap_or_default();
    names.sort();
    for name in names {
        let name = name.to_string_lossy().into_owned();
        let proto = games.join(&name).join(format!("{name}.proto"));
        if proto.is_file() {
            protos.push(proto);
        }
    }
    for proto in &protos {
        println!("cargo:rerun-if-changed={}", proto.display());
    }
    println!("cargo:rerun-if-changed={}", games.display());
    let mut includes = vec![envelope_root];
    if games_root != includes[0] {
        includes.push(games_root);
    }
    prost_build::Config::new()
        .include_file("protocol.rs")
        .compile_protos(&protos, &includes)
        .unwrap_or_else(|error| panic!("protoc failed (apt-get install protobuf-compiler): {error}"));
}
