package timeline

// The lifecycle lines rollcheck reads: the "event" of an app's JSON line on stdout
// (docs/reference.md, "What your app can tell rollcheck", has an entry for each; a test checks it).
// The sample app (internal/sampleapp) writes them, internal/observe records them as AppEvent
// and internal/attribute reads them.
const (
	// LineSIGTERM: the stop signal arrived.
	LineSIGTERM = "sigterm"
	// LineListenerClosed: the listener stopped accepting new connections.
	LineListenerClosed = "listener_closed"
	// LineExiting: the process is about to exit.
	LineExiting = "exiting"
	// LinePreStop: the preStop hook began (field "phase" PreStopStart) or ended ("end").
	LinePreStop = "prestop"
	// PreStopStart is the "phase" of the LinePreStop line written as the hook begins.
	PreStopStart = "start"
)

// Lines the sample app writes that rollcheck keeps and draws but does not read.
const (
	// LineStarted: the app is listening (its fields are its configuration).
	LineStarted = "started"
	// LineReady: the app's readiness turned on.
	LineReady = "ready"
	// LineDrained: the app's drain ended (the requests it completed, those still in flight).
	LineDrained = "drained"
)

// ReadLines are the lifecycle lines rollcheck reads, in the order docs/reference.md lists them.
var ReadLines = []string{LineSIGTERM, LineListenerClosed, LineExiting, LinePreStop}

// DrawnLines are the lines the sample app writes that are only drawn (docs/reference.md names
// them as "Other events").
var DrawnLines = []string{LineStarted, LineReady, LineDrained}
