"""The protocol: the gRPC server the bots connect to (:mod:`.server`, with the seats the referee talks to), its own
HTTP/2 for launched bots' sockets and the SDK's client (:mod:`.http2`), the game-neutral codec (:mod:`.codec`) and
the gRPC environment set before gRPC starts (:mod:`.transport`)."""
