package cluster

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"
)

// What process 1 hands the other Ginkgo processes (SynchronizedBeforeSuite's data) holds no
// credential: every process reads kind's kubeconfig in-process itself (Join).
func TestShareHoldsNoCredentials(t *testing.T) {
	const token = "rollcheck-test-token-4f1d"
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: token}
	client, err := klient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Options: Options{Name: "rollcheck", NodeImage: "rollcheck/kind-node:v1", LoadImage: "rollcheck/load:0123456789ab",
		PodSecurity: "restricted"}, Config: &KindConfig{NodePort: 30080, HostPort: 30080}, Client: client}
	b, err := json.Marshal(c.Share())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{token, cfg.Host} {
		if strings.Contains(string(b), secret) {
			t.Errorf("Share holds %q: %s", secret, b)
		}
	}
	if !strings.Contains(string(b), `"podSecurity":"restricted"`) {
		t.Errorf("Share does not carry the Pod Security level to the other processes: %s", b)
	}
}
