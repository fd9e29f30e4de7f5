package inplace

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
)

func svc(name string, selector map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Selector: selector, Ports: ports}}
}

// The Service the load goes to: the one named, else the one that selects the pods; its port that
// reaches the container port by number or by name. Anything else is an error naming what is there.
func TestService(t *testing.T) {
	ctx := context.Background()
	d := live()
	d.Spec.Template.Spec.Containers[0].Ports[0].Name = "http"
	web := map[string]string{"app": "web"}
	byName := corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}
	byNumber := corev1.ServicePort{Port: 8081, TargetPort: intstr.FromInt32(8080)}
	headless := svc("web-headless", web, byName)
	headless.Spec.ClusterIP = corev1.ClusterIPNone
	argo := map[string]string{"app": "web", RolloutHashLabel: "7d9f"}
	for _, tc := range []struct {
		name, named string
		svcs        []*corev1.Service
		want        string
		port        int32
		err         string
		rollout     bool
	}{
		// Argo routes its active and preview Services by the revision's hash, which the pods of
		// that revision carry and the Rollout's own template does not.
		{"a Rollout's active Service", "web", []*corev1.Service{svc("web", argo, byName)}, "web", 80, "", true},
		{"a Rollout's, found", "", []*corev1.Service{svc("web", argo, byName), svc("db", map[string]string{"app": "db"}, byName)}, "web", 80, "", true},
		{"a Deployment's, hash kept", "web", []*corev1.Service{svc("web", argo, byName)}, "", 0, "Service shop/web does not select the pods of Deployment web", false},
		{"the one that selects", "", []*corev1.Service{svc("web", web, byName), svc("db", map[string]string{"app": "db"}, byName)}, "web", 80, "", false},
		{"by number", "", []*corev1.Service{svc("web", web, corev1.ServicePort{Port: 9090, TargetPort: intstr.FromInt32(9090)}, byNumber)}, "web", 8081, "", false},
		{"named", "web-b", []*corev1.Service{svc("web-a", web, byName), svc("web-b", web, byNumber)}, "web-b", 8081, "", false},
		{"none", "", []*corev1.Service{svc("db", map[string]string{"app": "db"}, byName)}, "", 0,
			"no Service of namespace shop selects the pods of Deployment web (Services there: db): name one (app.service)", false},
		{"several", "", []*corev1.Service{svc("web-a", web, byName), svc("web-b", web, byName)}, "", 0,
			"2 Services of namespace shop select the pods of Deployment web (web-a, web-b): name the one the load goes to (app.service)", false},
		{"named, not there", "nope", nil, "", 0, "Service shop/nope: not found", false},
		{"named, other pods", "db", []*corev1.Service{svc("db", map[string]string{"app": "db"}, byName)}, "", 0, "Service shop/db does not select the pods of Deployment web", false},
		{"headless", "web-headless", []*corev1.Service{headless}, "", 0, "Service shop/web-headless is headless", false},
		{"no port", "", []*corev1.Service{svc("web", web, corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("metrics")})}, "", 0,
			"no port of Service shop/web reaches container port 8080 (its ports: 80→metrics)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, s := range tc.svcs {
				if _, err := cs.CoreV1().Services("shop").Create(ctx, s, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			s, port, err := Service(ctx, cs, d, tc.named, 8080, tc.rollout)
			name := ""
			if s != nil {
				name = s.Name
			}
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			case tc.err == "" && (err != nil || name != tc.want || port != tc.port):
				t.Errorf("got %s:%d %v, want %s:%d", name, port, err, tc.want, tc.port)
			}
		})
	}
}
