// Command hello is the kind of app rollcheck's users bring: a plain net/http server that
// knows nothing of rollcheck. It takes no flags, names no pod in its answers, and does what a
// Go program does by default at SIGTERM: it exits at once, dropping whatever is in flight.
// It reads its greeting from the GREETING environment variable (a ConfigMap in the example's
// manifests) and listens on :8080.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	greeting := os.Getenv("GREETING")
	if greeting == "" {
		greeting = "hello"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, greeting)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("hello: listening on %s", srv.Addr)
	log.Fatal(srv.ListenAndServe())
}
