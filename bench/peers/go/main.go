// Go net/http peer for the kiln benchmark suite: the contract endpoints on the
// standard library alone. The runner sets GOMAXPROCS=1 for one worker.
package main

import (
	"encoding/json"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
)

func text(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Server"] = []string{"go"}
		h["Content-Type"] = []string{"text/plain"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.Write([]byte(body))
	}
}

func jsonHandler(w http.ResponseWriter, r *http.Request) {
	body, err := json.Marshal(struct {
		Message string `json:"message"`
	}{"Hello, World!"})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h["Server"] = []string{"go"}
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.Write(body)
}

func intParam(r *http.Request, name string, fallback, max int) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n < 1 {
		return fallback
	}
	if n > max {
		return max
	}
	return n
}

// bigtable renders Yesod's table per request, as html/template would, without the template engine.
func bigtable(w http.ResponseWriter, r *http.Request) {
	rows := intParam(r, "rows", 1000, 10000)
	cols := intParam(r, "cols", 50, 1000)
	var b strings.Builder
	b.WriteString("<table>")
	for i := 0; i < rows; i++ {
		b.WriteString("<tr>")
		for c := 1; c <= cols; c++ {
			b.WriteString("<td>")
			b.WriteString(strconv.Itoa(c))
			b.WriteString("</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	h := w.Header()
	h["Server"] = []string{"go"}
	h["Content-Type"] = []string{"text/html; charset=utf-8"}
	w.Write([]byte(b.String()))
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	staticDir := os.Getenv("STATIC_DIR")
	if staticDir == "" {
		staticDir = "static"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/pong", text("PONG"))
	mux.HandleFunc("/hello", text("Hello World!"))
	mux.HandleFunc("/plaintext", text("Hello, World!"))
	mux.HandleFunc("/json", jsonHandler)
	mux.HandleFunc("/bigtable", bigtable)
	files := http.StripPrefix("/static/", http.FileServer(http.Dir(staticDir)))
	mux.Handle("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Server"] = []string{"go"}
		files.ServeHTTP(w, r)
	}))
	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, mux))
}
