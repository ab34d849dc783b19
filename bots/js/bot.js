// An arena bot in JavaScript (Node.js), written from the protocol's .proto files (version 2: the envelope
// proto/arena/v2/arena.proto and each game's arena/games/<game>/<game>.proto) and docs/bot-guide.md alone.
// It plays every game whose .proto it finds: the first legal choice (Cabanga!: lowest card onto its left pile;
// L.A.M.A.: lowest legal card, else draw, else quit) and it throws every card it may. Each answer carries a line
// of debug text saying why, which only the bot's owner sees (debug() below).
//
//   npm ci        (once, in this folder)
//   node bot.js   (the arena sets ARENA_ADDRESS and ARENA_TOKEN)
"use strict";

const fs = require("fs");
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");

// The .proto files: proto/ beside this file holds them all (a bot made by `arena new`: proto/arena/v2/arena.proto
// and proto/arena/games/<game>/<game>.proto); else the arena's own source tree (bots/js in it) has the envelope
// under proto/ and the games under its root.
const HERE = path.join(__dirname, "proto");
const inTree = !fs.existsSync(path.join(HERE, "arena", "v2", "arena.proto"));
const ENVELOPE = inTree ? path.join(__dirname, "..", "..", "proto", "arena", "v2", "arena.proto")
  : path.join(HERE, "arena", "v2", "arena.proto");
const GAMES = inTree ? path.join(__dirname, "..", "..", "arena", "games") : path.join(HERE, "arena", "games");
const gameProtos = fs.readdirSync(GAMES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => path.join(GAMES, entry.name, `${entry.name}.proto`))
  .filter((file) => fs.existsSync(file));

// The service and the envelope's messages, for grpc-js. An Any arrives as { type_url, value } (value: bytes).
const definition = protoLoader.loadSync(ENVELOPE, { keepCase: true, enums: String, longs: String, defaults: true });

// The arena sends a DecisionRequest in pieces, one after the other in one message: its fields and view, each event,
// then its id and send time. Protobuf reads a message field sent more than once as the pieces merged (repeated
// fields appended), and so do the other languages' runtimes; protobufjs keeps only the last piece. So the bot
// joins the pieces of ArenaMessage.request (field 3) into one before protobufjs reads the message.
const REQUEST_FIELD = 3;
function joinRequestPieces(bytes) {
  const reader = protobuf.Reader.create(bytes);
  const pieces = [];
  const others = [];
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    if (tag >>> 3 === REQUEST_FIELD && (tag & 7) === 2) {
      pieces.push(reader.bytes());
    } else {
      reader.skipType(tag & 7);
      others.push(bytes.subarray(start, reader.pos));
    }
  }
  if (pieces.length < 2) return bytes;
  const joined = protobuf.Writer.create().uint32((REQUEST_FIELD << 3) | 2).bytes(Buffer.concat(pieces)).finish();
  return Buffer.concat([...others, joined]);
}
const play = definition["arena.v2.Arena"].Play;
const deserialize = play.responseDeserialize;
play.responseDeserialize = (bytes) => deserialize(joinRequestPieces(bytes));
const arena = grpc.loadPackageDefinition(definition).arena.v2;

// Every message that travels in an Any (the games' views and events, the envelope's shared events), to decode
// them by their type URL, "type.googleapis.com/arena.lama.v1.View" for instance.
const types = new protobuf.Root().loadSync([ENVELOPE, ...gameProtos], { keepCase: true });

// The message inside `any` as a plain object (snake_case fields, every field present), with its full type name
// as `$type`; null for a type this bot has no .proto for (skip it).
function unpack(any) {
  if (!any || !any.type_url) return null;
  const name = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
  let type;
  try {
    type = types.lookupType(name);
  } catch (err) {
    return null;
  }
  const message = type.toObject(type.decode(any.value), { longs: String, enums: String, defaults: true });
  message.$type = name;
  return message;
}

const address = process.env.ARENA_ADDRESS;
const token = process.env.ARENA_TOKEN;
if (!address || !token) {
  console.error("ARENA_ADDRESS and ARENA_TOKEN must be set");
  process.exit(2);
}

const client = new arena.Arena(address, grpc.credentials.createInsecure());
const stream = client.Play();
stream.write({ hello: { token, protocol_version: 2, agent: "arena-js-bot (Node.js)" } });

// Debug text: a note on this decision for the bot's owner alone (`arena replay --seat N`, the contest's replay
// viewer on their own seat, their submission page); never shown to another seat. It travels in the answer's
// `debug` bytes (UTF-8). The arena keeps at most 1 KiB a decision and 64 KiB a match, and a message may be 64 KiB
// at most: so this cuts it at 1 KiB, on a character's boundary, and says so. Several notes join, a line each.
const DEBUG_BYTES = 1024;
const DEBUG_CUT = Buffer.from("... [cut: over 1024 bytes]");
function debug(answer, text) {
  const old = answer.debug || Buffer.alloc(0);
  if (old.length > DEBUG_BYTES - DEBUG_CUT.length && old.subarray(-DEBUG_CUT.length).equals(DEBUG_CUT)) return;
  const more = Buffer.from(String(text), "utf8"); // a lone surrogate becomes U+FFFD: always valid UTF-8
  let data = old.length ? Buffer.concat([old, Buffer.from("\n"), more]) : more;
  if (data.length > DEBUG_BYTES) {
    let end = DEBUG_BYTES - DEBUG_CUT.length;
    while (end > 0 && (data[end] & 0xc0) === 0x80) end--; // not inside a character
    data = Buffer.concat([data.subarray(0, end), DEBUG_CUT]);
  }
  answer.debug = data;
}

// request.kind is the game's name for the decision ("play", "throw", "turn", ...); view is the game's View
// (view.hand, view.totals, ...; Cabanga! view.tops, L.A.M.A. view.discard), which this bot does not need.
// Returns the picks, and says why in the answer's debug text.
function picksFor(request, view, answer) {
  if (request.pick === "PICK_SUBSET") {
    debug(answer, `throw all ${request.choices.length}`);
    return request.choices.map((_, i) => i); // throw everything offered
  }
  debug(answer, `${request.choices[0]}: the first legal choice`);
  return [0];
}

// The events since the previous request: the game's own and the shared ones (arena.v2.RoundScored, ...).
function logScores(events) {
  for (const event of events.map(unpack)) {
    if (event && event.$type === "arena.v2.RoundScored") {
      console.error(`round ${event.round}: totals ${event.totals.join(" ")}`);
    }
  }
}

stream.on("data", (message) => {
  if (message.request) {
    const request = message.request;
    logScores(request.events);
    // request_id is a uint64: loaded as a string (longs: String) and echoed as it came
    const answer = { request_id: request.request_id };
    answer.picks = picksFor(request, unpack(request.view), answer);
    stream.write({ answer });
  } else if (message.match_start) {
    const start = message.match_start;
    console.error(`match ${start.match_id} of ${start.game}: seat ${start.seat}`);
  } else if (message.match_end) {
    logScores(message.match_end.events);
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
