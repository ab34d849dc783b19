// A whole arena bot in Rust, written from the protocol (version 2: the envelope proto/arena/v2/arena.proto and the
// games' arena/games/cabanga/cabanga.proto and arena/games/lama/lama.proto) and docs/bot-guide.md.
//
// Cabanga!: plays the card that leaves the smallest gap in its row (so others can throw little at it), avoiding
// the colour just played; throws every card it may. L.A.M.A.: plays the lowest legal card, else draws while the
// draw pile is big, else quits. Any other game: the first legal choice (a subset: none). Each answer carries a line
// of debug text saying why, which only the bot's owner sees (debug below).
//
// gRPC without tonic (Debian packages no tonic): the Play stream is one HTTP/2 POST to /arena.v2.Arena/Play
// (h2), whose bodies are gRPC messages, each a 0 byte (not compressed), its length (4 bytes, big-endian) and
// its protobuf bytes (prost); the call's status comes in the trailers (grpc-status, grpc-message).
//
// Build: sh build.sh (cargo and rustc, protoc, and Debian's crates; offline; see build.sh)
// Run by the arena, which sets ARENA_ADDRESS and ARENA_TOKEN.
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::Message;
use prost_types::Any;
use tokio::io::{AsyncRead, AsyncWrite};

// The code build.rs generates from the .proto files: arena::v2 (the envelope), arena::cabanga::v1,
// arena::lama::v1 (their View and events), and a module for every other game's .proto it found.
include!(concat!(env!("OUT_DIR"), "/protocol.rs"));

use arena::v2::{arena_message, bot_message, Answer, ArenaMessage, BotMessage, DecisionRequest, Hello, Pick};
use arena::{cabanga::v1 as cabanga, lama::v1 as lama};

/// A request older than its timeout less this is skipped (the arena has applied its default).
const SAFETY_MARGIN_MS: i64 = 2;
/// A message from the arena may be this big at most (the bot refuses a bigger frame rather than buffer it).
const MAX_MESSAGE: usize = 4 << 20;

/// Debug text: a note on a decision for the bot's owner alone (`arena replay --seat N`, the contest's replay viewer
/// on their own seat, their submission page); never shown to another seat. It travels in the answer's `debug` bytes
/// (UTF-8). The arena keeps at most 1 KiB a decision and 64 KiB a match, and a message may be 64 KiB at most: so
/// `debug` cuts it at 1 KiB, on a character's boundary, and says so.
const DEBUG_BYTES: usize = 1024;
const DEBUG_CUT: &str = "... [cut: over 1024 bytes]";

/// Add `text` to the answer's debug text, a line of its own.
fn debug(answer: &mut Answer, text: &str) {
    let data = &mut answer.debug;
    if data.len() > DEBUG_BYTES - DEBUG_CUT.len() && data.ends_with(DEBUG_CUT.as_bytes()) {
        return; // cut already: keeps no more
    }
    if !data.is_empty() {
        data.push(b'\n');
    }
    data.extend_from_slice(text.as_bytes());
    if data.len() > DEBUG_BYTES {
        let mut end = DEBUG_BYTES - DEBUG_CUT.len();
        while end > 0 && data[end] & 0xC0 == 0x80 {
            end -= 1; // not inside a character
        }
        data.truncate(end);
        data.extend_from_slice(DEBUG_CUT.as_bytes());
    }
}

/// The value of a Cabanga! card or play text: "R7" or "R7:left" -> 7.
fn value(text: &str) -> i64 {
    let card = text.split(':').next().unwrap_or("");
    card.get(1..).and_then(|digits| digits.parse().ok()).unwrap_or(0)
}

/// Cabanga!: the play whose row gap after it is smallest; a repeated colour costs as much as a gap of 3; and why
/// ("R7:left: gap 2").
fn choose_play(request: &DecisionRequest, view: &cabanga::View) -> (u32, String) {
    let mut best = (0, i64::MAX, String::new());
    for (i, choice) in request.choices.iter().enumerate() {
        let colour = &choice[..1];
        let row = "RBPY".find(colour).unwrap_or(0);
        // the other pile of the row: a play onto the right pile is compared with the left top
        let side = usize::from(choice.ends_with(":left"));
        let top = view.tops.get(2 * row + side).map_or(0, |top| value(top));
        let gap = (value(choice) - top).abs();
        let again = view.previous_colour == colour;
        let cost = gap + if again { 3 } else { 0 };
        if cost < best.1 {
            let why = format!("{choice}: gap {gap}{}", if again { ", its colour again (+3)" } else { "" });
            best = (i as u32, cost, why);
        }
    }
    (best.0, best.2)
}

/// L.A.M.A.: the choices are the legal cards (lowest first), then "draw" if allowed, then "quit"; and why ("L3: the
/// lowest legal card").
fn choose_turn(request: &DecisionRequest, view: &lama::View) -> (u32, String) {
    let first = request.choices[0].as_str();
    if first != "draw" && first != "quit" {
        return (0, format!("{first}: the lowest legal card")); // a card to play
    }
    if first == "draw" && view.draw_size > 8 {
        return (0, format!("draw: no card fits, {} cards to draw", view.draw_size));
    }
    let why = if first == "draw" {
        format!("quit: no card fits, only {} cards to draw", view.draw_size)
    } else {
        "quit: no card fits, no draw allowed".to_string()
    };
    (request.choices.len() as u32 - 1, why) // quit
}

/// The type URL of a message of package.name, as the arena packs it in an Any.
fn is(any: &Any, full_name: &str) -> bool {
    any.type_url.rsplit('/').next() == Some(full_name)
}

/// Unpack the view: the game's own View message packed in a google.protobuf.Any, whose type URL names View's
/// type ("type.googleapis.com/arena.cabanga.v1.View"). On failure, the crash reason for the answer (the arena
/// then applies the request's default at once and logs why).
fn unpack<M: Message + Default>(request: &DecisionRequest, full_name: &str) -> Result<M, String> {
    let view = request.view.as_ref().ok_or("a request without a view")?;
    M::decode(view.value.as_slice())
        .map_err(|error| format!("expected a {full_name} view, not {:?}: {error}", view.type_url))
}

/// Answer one request. The decision kinds are the games' names: Cabanga! "play" and "throw", L.A.M.A. "turn";
/// another game's are answered from the envelope alone.
fn decide(request: &DecisionRequest) -> Answer {
    let mut answer = Answer { request_id: request.request_id, ..Answer::default() };
    let view_is = |full_name| request.view.as_ref().map_or(false, |view| is(view, full_name));
    let one = |(pick, why)| (vec![pick], why);
    let picked = match request.kind.as_str() {
        "play" if view_is("arena.cabanga.v1.View") => {
            unpack(request, "arena.cabanga.v1.View").map(|view| one(choose_play(request, &view)))
        }
        "throw" if view_is("arena.cabanga.v1.View") => {
            let all = (0..request.choices.len() as u32).collect(); // throw everything
            Ok((all, format!("throw all {}", request.choices.len())))
        }
        "turn" if view_is("arena.lama.v1.View") => {
            unpack(request, "arena.lama.v1.View").map(|view| one(choose_turn(request, &view)))
        }
        // any subset is legal, none at all included
        _ if request.pick == Pick::Subset as i32 => Ok((vec![], "none".to_string())),
        _ if !request.choices.is_empty() => Ok(one((0, format!("{}: the first legal choice", request.choices[0])))),
        _ => Err("a request to pick one of no choices".to_string()),
    };
    match picked {
        Ok((picks, why)) => {
            answer.picks = picks;
            debug(&mut answer, &why);
        }
        Err(reason) => answer.crash = reason,
    }
    answer
}

/// The events (of the game, and the shared SeatFaulted, RoundScored, MatchOver) are Any too; this bot needs
/// none but the scores, which it logs. A bot skips the types it does not know.
fn log_scores(events: &[Any]) {
    for event in events.iter().filter(|event| is(event, "arena.v2.RoundScored")) {
        if let Ok(scored) = arena::v2::RoundScored::decode(event.value.as_slice()) {
            eprintln!("round {}: totals {:?}", scored.round, scored.totals);
        }
    }
}

/// One gRPC message: a 0 byte (not compressed), the length (4 bytes, big-endian), the protobuf bytes.
fn frame(message: &BotMessage) -> Bytes {
    let mut framed = BytesMut::with_capacity(5 + message.encoded_len());
    framed.put_u8(0);
    framed.put_u32(message.encoded_len() as u32);
    message.encode(&mut framed).expect("the buffer has the room");
    framed.freeze()
}

/// The next whole message in `buffer` (removed from it), if it holds one.
fn next_message(buffer: &mut BytesMut) -> Result<Option<ArenaMessage>, String> {
    if buffer.len() < 5 {
        return Ok(None);
    }
    let length = u32::from_be_bytes([buffer[1], buffer[2], buffer[3], buffer[4]]) as usize;
    if buffer[0] != 0 {
        return Err("a compressed message (the bot asked for none)".into());
    }
    if length > MAX_MESSAGE {
        return Err(format!("a message of {length} bytes"));
    }
    if buffer.len() < 5 + length {
        return Ok(None);
    }
    buffer.advance(5);
    let body = buffer.split_to(length);
    ArenaMessage::decode(body).map(Some).map_err(|error| format!("undecodable message: {error}"))
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |time| time.as_millis() as i64)
}

/// The call's end: grpc-status 0 (OK) or 1 (CANCELLED, the arena closing the stream) is a normal end.
fn status(headers: &http::HeaderMap) -> Result<(), String> {
    let text = |name| headers.get(name).and_then(|value: &http::HeaderValue| value.to_str().ok()).unwrap_or("");
    match text("grpc-status") {
        "" | "0" | "1" => Ok(()),
        code => Err(format!("gRPC status {code}: {}", text("grpc-message"))),
    }
}

/// Play on the connection `io` (a Unix socket or TCP) until the arena says goodbye or ends the stream.
async fn play<T: AsyncRead + AsyncWrite + Unpin + Send + 'static>(io: T, authority: &str, token: String)
    -> Result<(), String> {
    let (client, connection) = h2::client::handshake(io).await.map_err(|e| format!("HTTP/2 handshake: {e}"))?;
    // the connection's own task reads and writes the socket; the streams below talk to it
    let connection = tokio::spawn(async move {
        if let Err(error) = connection.await {
            eprintln!("arena: connection failed: {error}");
        }
    });
    let mut client = client.ready().await.map_err(|e| format!("HTTP/2: {e}"))?;
    let request = http::Request::post(format!("http://{authority}/arena.v2.Arena/Play"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .map_err(|e| e.to_string())?;
    let (response, mut send) = client.send_request(request, false).map_err(|e| format!("cannot open the stream: {e}"))?;
    let hello = Hello { token, protocol_version: 2, agent: "arena-rust-example".into() };
    send.send_data(frame(&BotMessage { body: Some(bot_message::Body::Hello(hello)) }), false)
        .map_err(|e| format!("cannot send the hello: {e}"))?;
    let response = response.await.map_err(|e| format!("the stream failed: {e}"))?;
    status(response.headers())?; // a refusal (a wrong token, say) comes as headers only, with the status
    let mut body = response.into_body();

    // A request that waited in the stream while the bot was busy is skipped once its time has run out: its age
    // comes from the arena's clock (sent_time_ms) and the offset between the clocks measured at the Welcome.
    let mut offset_ms: Option<i64> = None;
    let mut buffer = BytesMut::new();
    'stream: while let Some(data) = body.data().await {
        let data = data.map_err(|e| format!("the stream failed: {e}"))?;
        // give the arena back the window this data took, or it stops sending after 64 KiB
        let _ = body.flow_control().release_capacity(data.len());
        buffer.extend_from_slice(&data);
        while let Some(message) = next_message(&mut buffer)? {
            match message.body {
                Some(arena_message::Body::Welcome(welcome)) => {
                    if welcome.arena_time_ms != 0 {
                        offset_ms = Some(now_ms() - welcome.arena_time_ms as i64);
                    }
                }
                Some(arena_message::Body::MatchStart(start)) => {
                    eprintln!("match {} of {}: seat {}", start.match_id, start.game, start.seat);
                }
                Some(arena_message::Body::Request(request)) => {
                    log_scores(&request.events);
                    if let (Some(offset), true) = (offset_ms, request.sent_time_ms != 0) {
                        let age = now_ms() - offset - request.sent_time_ms as i64;
                        if age > request.timeout_ms as i64 - SAFETY_MARGIN_MS {
                            continue; // too late to count: the arena has applied the default already
                        }
                    }
                    // a panic while deciding is answered as a crash (its message also goes to stderr), and the bot
                    // plays on: the arena applies the request's default at once
                    let answer = std::panic::catch_unwind(|| decide(&request)).unwrap_or_else(|_| Answer {
                        request_id: request.request_id,
                        crash: "panic while deciding (see the bot's log)".into(),
                        ..Answer::default()
                    });
                    let answer = BotMessage { body: Some(bot_message::Body::Answer(answer)) };
                    send.send_data(frame(&answer), false).map_err(|e| format!("cannot send an answer: {e}"))?;
                }
                Some(arena_message::Body::MatchEnd(end)) => log_scores(&end.events),
                Some(arena_message::Body::Goodbye(_)) => break 'stream,
                None => {}
            }
        }
    }
    if !body.is_end_stream() {
        // Goodbye: close our half of the stream and let the connection finish sending
        let _ = send.send_data(Bytes::new(), true);
    } else if let Some(trailers) = body.trailers().await.map_err(|e| format!("the stream failed: {e}"))? {
        status(&trailers)?;
    }
    drop((body, send, client));
    let _ = connection.await; // ends once the stream and the client are gone
    Ok(())
}

fn main() {
    let (address, token) = match (std::env::var("ARENA_ADDRESS"), std::env::var("ARENA_TOKEN")) {
        (Ok(address), Ok(token)) if !address.is_empty() && !token.is_empty() => (address, token),
        _ => {
            eprintln!("arena: ARENA_ADDRESS and ARENA_TOKEN must be set");
            std::process::exit(2);
        }
    };
    // One thread does it all: no worker threads, so the process stays far within the arena's memory limit.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().expect("a tokio runtime");
    let played = runtime.block_on(async {
        // ARENA_ADDRESS is "unix:/path/to/socket" (the arena's usual one) or "host:port"
        if let Some(path) = address.strip_prefix("unix:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            let socket = tokio::net::UnixStream::connect(path).await.map_err(|e| format!("cannot connect: {e}"))?;
            play(socket, "localhost", token).await
        } else {
            let socket = tokio::net::TcpStream::connect(&address).await.map_err(|e| format!("cannot connect: {e}"))?;
            let _ = socket.set_nodelay(true);
            play(socket, &address, token).await
        }
    });
    if let Err(error) = played {
        eprintln!("arena: {error}");
        std::process::exit(1);
    }
}
