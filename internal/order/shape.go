package order

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"wds/internal/platform/database"
)

// A view struct is the one definition of a resource's shape. Each field's json tag is its key and
// its sql tag the SQL expression of its value; a struct field without an sql tag is a nested object
// walked the same way. A shape, derived once from the struct, gives what would otherwise be written
// again by hand and drift: the select list and the Scan targets of a row, the json_build_object
// PostgreSQL builds an element of an array with, and the fast encoder of the Read API's pages.
type shape[T any] struct {
	leaves []leaf
	// end is the JSON after the last leaf: the closing braces.
	end string
}

// leaf is one value of the shape: a field that is not a nested object.
type leaf struct {
	index []int
	key   string
	sql   string
	// prefix is the JSON before the value: the separator, the key, and the opening of nested objects
	// (and the closing of any that ended just before).
	prefix string
	// offset is the field's offset in the outermost struct, nested objects' included.
	offset uintptr
	// encode appends the value of the field at p as encoding/json writes it; nil for types the fast
	// encoder does not know, which shapes that need it refuse (encoder).
	encode func(b []byte, p unsafe.Pointer) []byte
	// time: the value is a time.Time or *time.Time, which SQL must write as Go does (database.JSONTime).
	time bool
}

// shapeOf walks T's fields; a field without a json key is a definition defect, so it panics.
func shapeOf[T any]() *shape[T] {
	s := &shape[T]{}
	s.end = walk(&s.leaves, reflect.TypeFor[T](), nil, 0, "")
	return s
}

// walk adds t's fields to leaves, t being at index and offset, writing pending before the object, and
// returns the JSON due after it. It is a function, not a method of the generic shape: as a method,
// package initialization did not order orderShape after encoders and timeType, which it reads.
func walk(leaves *[]leaf, t reflect.Type, index []int, offset uintptr, pending string) string {
	pending += "{"
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "" || key == "-" || strings.ContainsAny(key, `'"\`) {
			panic(fmt.Sprintf("order: %s.%s needs a plain json key", t.Name(), f.Name))
		}
		if i > 0 {
			pending += ","
		}
		pending += strconv.Quote(key) + ":"
		at := append(slices.Clip(index), i)
		expr, ok := f.Tag.Lookup("sql")
		if !ok && f.Type.Kind() == reflect.Struct && f.Type != timeType {
			pending = walk(leaves, f.Type, at, offset+f.Offset, pending)
			continue
		}
		isTime := f.Type == timeType || f.Type == reflect.PointerTo(timeType)
		*leaves = append(*leaves, leaf{index: at, key: key, sql: expr, prefix: pending,
			offset: offset + f.Offset, encode: encoders[f.Type], time: isTime})
		pending = ""
	}
	return pending + "}"
}

var timeType = reflect.TypeFor[time.Time]()

// encoders write each type a view's fields hold, as encoding/json writes it, from the field's address.
// They read fields by offset: going through reflect for each field made a page's encoding half as slow
// again.
var encoders = map[reflect.Type]func(b []byte, p unsafe.Pointer) []byte{
	reflect.TypeFor[uuid.UUID]():       func(b []byte, p unsafe.Pointer) []byte { return appendUUID(b, *(*uuid.UUID)(p)) },
	reflect.TypeFor[*uuid.UUID]():      func(b []byte, p unsafe.Pointer) []byte { return appendNullUUID(b, *(**uuid.UUID)(p)) },
	reflect.TypeFor[string]():          func(b []byte, p unsafe.Pointer) []byte { return appendString(b, *(*string)(p)) },
	reflect.TypeFor[*string]():         func(b []byte, p unsafe.Pointer) []byte { return appendNullString(b, *(**string)(p)) },
	reflect.TypeFor[int64]():           func(b []byte, p unsafe.Pointer) []byte { return strconv.AppendInt(b, *(*int64)(p), 10) },
	reflect.TypeFor[json.RawMessage](): func(b []byte, p unsafe.Pointer) []byte { return appendRaw(b, *(*json.RawMessage)(p)) },
	timeType:                           func(b []byte, p unsafe.Pointer) []byte { return appendTime(b, *(*time.Time)(p)) },
	reflect.TypeFor[*time.Time]():      func(b []byte, p unsafe.Pointer) []byte { return appendNullTime(b, *(**time.Time)(p)) },
}

// encoder is the shape, checked to be one the fast encoder can write.
func (s *shape[T]) encoder() *shape[T] {
	for _, l := range s.leaves {
		if l.encode == nil {
			panic(fmt.Sprintf("order: no fast encoding for the value of %q", l.key))
		}
	}
	return s
}

// targets are pointers to v's leaves, in shape order, for Scan. A json.RawMessage is copied as the
// bytes it is into arena (pgx would decode JSON into any other type), and ids are read as pgx's
// binary form (database.IDTarget).
func (s *shape[T]) targets(v *T, arena *database.Arena) []any {
	ptrs := make([]any, len(s.leaves))
	for i, l := range s.leaves {
		ptrs[i] = reflect.ValueOf(v).Elem().FieldByIndex(l.index).Addr().Interface()
		switch p := ptrs[i].(type) {
		case *json.RawMessage:
			ptrs[i] = arena.RawTarget((*[]byte)(p))
		case *uuid.UUID:
			ptrs[i] = database.IDTarget(p)
		case **uuid.UUID:
			ptrs[i] = database.NullableIDTarget(p)
		}
	}
	return ptrs
}

// toUTC puts the times among targets in UTC: encoding/json writes a time with its zone's offset, and
// the session's zone must not show in the output.
func toUTC(targets []any) {
	for _, p := range targets {
		switch t := p.(type) {
		case *time.Time:
			*t = t.UTC()
		case **time.Time:
			if *t != nil {
				u := (*t).UTC()
				*t = &u
			}
		}
	}
}

// appendJSON appends v as encoding/json writes it. The shape is T's, so the offsets are v's fields.
func (s *shape[T]) appendJSON(b []byte, v *T) []byte {
	p := unsafe.Pointer(v)
	for i := range s.leaves {
		l := &s.leaves[i]
		b = l.encode(append(b, l.prefix...), unsafe.Add(p, l.offset))
	}
	return append(b, s.end...)
}

// jsonObject is the SQL json_build_object of a flat shape whose values are its sql tags. Times are
// written as encoding/json writes them (database.JSONTime), so a value reads the same built by either.
func (s *shape[T]) jsonObject() string {
	args := make([]string, len(s.leaves))
	for i, l := range s.leaves {
		if len(l.index) > 1 || l.sql == "" {
			panic(fmt.Sprintf("order: %q of a json_build_object must be a top-level field with an sql tag", l.key))
		}
		expr := l.sql
		if l.time {
			expr = database.JSONTime(expr)
		}
		args[i] = "'" + l.key + "', " + expr
	}
	return "json_build_object(" + strings.Join(args, ", ") + ")"
}
