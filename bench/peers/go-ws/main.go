// Go WebSocket echo peer for the kiln benchmark suite: net/http + gorilla/websocket, run with
// GOMAXPROCS=1. GET /ws/echo echoes every text and binary message as sent, with
// permessage-deflate when the client offers it; GET /pong answers the readiness probe.
package main

import (
	"log"
	"net/http"
	"os"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	// Negotiated only when the client offers it (gorilla answers without context takeover).
	EnableCompression: true,
	CheckOrigin:       func(*http.Request) bool { return true },
}

func echo(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has already answered 400
	}
	defer conn.Close()
	conn.SetReadLimit(1 << 20)
	for {
		// Pings get their pong and a close frame its echo from gorilla's default handlers.
		kind, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if err := conn.WriteMessage(kind, msg); err != nil {
			return
		}
	}
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	http.HandleFunc("/pong", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("PONG"))
	})
	http.HandleFunc("/ws/echo", echo)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, nil))
}
