package attack

import (
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/rollcheck/rollcheck/loadgen"
)

// loadgen, which does not import vegeta, keeps vegeta's defaults as its own: they must not drift.
func TestVegetaDefaults(t *testing.T) {
	if loadgen.DefaultConnections != vegeta.DefaultConnections || loadgen.DefaultWorkers != vegeta.DefaultWorkers {
		t.Errorf("loadgen's defaults: %d connections, %d workers; vegeta's: %d, %d",
			loadgen.DefaultConnections, loadgen.DefaultWorkers, vegeta.DefaultConnections, vegeta.DefaultWorkers)
	}
	c := loadgen.Config{}.WithDefaults()
	if c.Connections != vegeta.DefaultConnections || c.Workers != vegeta.DefaultWorkers {
		t.Errorf("WithDefaults: %d connections, %d workers; vegeta's: %d, %d", c.Connections, c.Workers,
			vegeta.DefaultConnections, vegeta.DefaultWorkers)
	}
}
