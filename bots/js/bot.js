// An arena bot in JavaScript (Node.js), written from proto/arena/v1/arena.proto and the README alone.
// It plays both games: the first legal choice (Cabanga!: lowest card onto its left pile; L.A.M.A.: lowest
// legal card, else draw, else quit) and throws every card it may.
//
//   npm ci        (once, in this folder)
//   node bot.js   (the arena sets ARENA_ADDRESS and ARENA_TOKEN)
"use strict";

const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

// arena.proto beside this file (a bot made by `arena new`), else the arena's own (bots/js in its source tree)
const fs = require("fs");
const HERE = path.join(__dirname, "arena.proto");
const PROTO = fs.existsSync(HERE) ? HERE : path.join(__dirname, "..", "..", "proto", "arena", "v1", "arena.proto");
const definition = protoLoader.loadSync(PROTO, { keepCase: true, enums: String, longs: String, defaults: true });
const arena = grpc.loadPackageDefinition(definition).arena.v1;

const address = process.env.ARENA_ADDRESS;
const token = process.env.ARENA_TOKEN;
if (!address || !token) {
  console.error("ARENA_ADDRESS and ARENA_TOKEN must be set");
  process.exit(2);
}

const client = new arena.Arena(address, grpc.credentials.createInsecure());
const stream = client.Play();
stream.write({ hello: { token, protocol_version: 1, agent: "arena-js-bot (Node.js)" } });

function picksFor(request) {
  if (request.pick === "PICK_SUBSET") {
    return request.choices.map((_, i) => i); // throw everything offered
  }
  return [0]; // the first legal choice
}

stream.on("data", (message) => {
  if (message.request) {
    const request = message.request;
    // request_id is a uint64: loaded as a string (longs: String) and echoed as it came
    stream.write({ answer: { request_id: request.request_id, picks: picksFor(request) } });
  } else if (message.goodbye) {
    stream.end();
    client.close();
  }
});
stream.on("error", (err) => {
  if (err.code !== grpc.status.CANCELLED) console.error(`stream failed: ${err.code} ${err.details}`);
  process.exit(1);
});
stream.on("end", () => process.exit(0));
