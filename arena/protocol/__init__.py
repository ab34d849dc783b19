"""The protocol: the gRPC server the bots connect to (:mod:`.server`, with the seats the referee talks to), the
game-neutral codec (:mod:`.codec`) and the gRPC environment set before gRPC starts (:mod:`.transport`)."""
