// Command crdcompat validates the CRD the way a kube-apiserver of an older release does when
// the CRD is created: apiextensions' ValidateCustomResourceDefinition, which compiles every CEL
// rule in the environment that release offers to new expressions, and estimates its cost. It
// is its own module, so that the operator's go.mod never pulls an old Kubernetes. go.mod pins
// the release of the minimum the README states (Kubernetes 1.29); to try another:
//
//	cd hack/crdcompat
//	go run . ../../config/crd/bases/beeburst.io_burstbuffers.yaml      # 1.29: 0 error(s)
//	go get k8s.io/apiextensions-apiserver@v0.28.3 && go run . ../../config/crd/bases/beeburst.io_burstbuffers.yaml
//
// (1.28 refuses every rule that uses the quantity library.) Restore go.mod afterwards.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"
)

func main() {
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &v1); err != nil {
		panic(err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1)
	var in apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &in, nil); err != nil {
		panic(err)
	}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), &in)
	for _, e := range errs {
		fmt.Println(e.Error())
	}
	fmt.Printf("%d error(s)\n", len(errs))
	if len(errs) > 0 {
		os.Exit(1)
	}
}
