// Command dra_cel_cost prints what the real DRA CEL compiler (k8s.io/dynamic-resource-allocation/cel
// at the version the oracle builds against) says about each expression of a corpus: its static cost
// estimate (CompilationResult.MaxCost, what API validation compares with the cost limits), its
// output type and any compile error. It generates the fixture tests/api/data/dra_cel_cost.json
// that fastsched's port of cel-go's cost estimator (fastsched/api/celcost.py) is checked against.
// To add expressions, append entries to the fixture and regenerate it in place:
//
//	cd tools/dra_cel_cost && go run . < ../../tests/api/data/dra_cel_cost.json > /tmp/f.json && mv /tmp/f.json ../../tests/api/data/dra_cel_cost.json
//
// (GOFLAGS=-mod=mod GOPROXY=off when the module cache already has everything: go.mod and go.sum are
// the oracle's.) Input: a JSON array of {"expression", "consumableCapacity", "listTypeAttributes",
// "derivedAttribute"}. Output: the same array with "maxCost" (a decimal string: it may be 2^64-1),
// "outputType" and "error" (the compiler's, "" when none) set.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

type entry struct {
	Expression         string `json:"expression"`
	ConsumableCapacity bool   `json:"consumableCapacity"`
	ListTypeAttributes bool   `json:"listTypeAttributes"`
	DerivedAttribute   bool   `json:"derivedAttribute"`
	MaxCost            string `json:"maxCost"`
	OutputType         string `json:"outputType"`
	Error              string `json:"error"`
}

func main() {
	var entries []entry
	if err := json.NewDecoder(os.Stdin).Decode(&entries); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i := range entries {
		e := &entries[i]
		// what API validation (validateCELExpression) compiles new expressions with
		envType := environment.NewExpressions
		result := dracel.GetCompiler(dracel.Features{
			EnableConsumableCapacity: e.ConsumableCapacity,
			EnableListTypeAttributes: e.ListTypeAttributes,
		}).CompileCELExpression(e.Expression, dracel.Options{EnvType: &envType, DerivedAttribute: e.DerivedAttribute})
		e.MaxCost = strconv.FormatUint(result.MaxCost, 10)
		e.OutputType, e.Error = "", ""
		if result.OutputType != nil {
			e.OutputType = result.OutputType.String()
		}
		if result.Error != nil {
			e.Error = result.Error.Detail
		}
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", " ")
	out.SetEscapeHTML(false)
	if err := out.Encode(entries); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
