// Kubernetes OpenAPI schema checks, offline, with npm's kubernetes-models (the schemas of
// Kubernetes 1.27, compiled to validators).
//
//   schemaErrors(obj) -> ["Deployment/lm-server: data/spec/replicas must be integer", ...]
//
// Besides the schema's types, required fields and formats, it reports fields the schema does
// not know (a misspelt `readinesProbe` would otherwise pass: the Kubernetes schemas allow
// extra properties, the API server drops them silently). It finds those by watching which
// properties the compiled validator reads: a property of an object that the validator
// neither reads nor enumerates (map-typed fields such as labels are enumerated) is unknown.
"use strict";

const path = require("path");

const MODELS = path.join(__dirname, "..", "node_modules", "kubernetes-models");

function objectName(obj) {
  const name = obj && obj.metadata && obj.metadata.name;
  return `${(obj && obj.kind) || "?"}/${name || "?"}`;
}

// The model class for apiVersion/kind, or null when kubernetes-models has none.
function modelClass(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string") return null;
  const slash = apiVersion.indexOf("/");
  const rel = slash < 0 ? `${apiVersion}/${kind}` : `${apiVersion.slice(0, slash)}/${apiVersion.slice(slash + 1)}/${kind}`;
  if (!/^[A-Za-z0-9.\-/]+$/.test(rel)) return null;
  try {
    return require(path.join(MODELS, rel))[kind] || null;
  } catch (e) {
    if (e.code === "MODULE_NOT_FOUND") return null;
    throw e;
  }
}

// Wraps `value` so that reads and enumerations are recorded in `records`.
function watch(value, where, records) {
  if (value === null || typeof value !== "object") return value;
  const rec = { where, value, read: new Set(), enumerated: false };
  records.push(rec);
  const children = new Map();
  return new Proxy(value, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || !Object.prototype.hasOwnProperty.call(target, key)) return v;
      rec.read.add(key);
      if (!children.has(key)) children.set(key, watch(v, `${where}/${key}`, records));
      return children.get(key);
    },
    has(target, key) {
      if (typeof key === "string") rec.read.add(key);
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      rec.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
}

// Kustomize folds long base64 values over several lines; the API server's decoder (Go's
// encoding/base64) skips the newlines, the schema's "byte" format does not.
function normalized(obj) {
  if (obj.kind !== "Secret" || !obj.data || typeof obj.data !== "object") return obj;
  const data = {};
  for (const [k, v] of Object.entries(obj.data)) data[k] = typeof v === "string" ? v.replace(/[\r\n]/g, "") : v;
  return { ...obj, data };
}

function schemaErrors(obj) {
  const name = objectName(obj);
  if (!obj || typeof obj !== "object") return [`${name}: not an object`];
  const Model = modelClass(obj.apiVersion, obj.kind);
  if (!Model) return [`${name}: no Kubernetes schema for apiVersion '${obj.apiVersion}' kind '${obj.kind}'`];
  const errors = [];
  const records = [];
  try {
    Model.prototype.validate.call(watch(normalized(obj), "", records));
  } catch (e) {
    errors.push(`${name}: ${e.message}`);
  }
  for (const rec of records) {
    if (rec.enumerated || Array.isArray(rec.value)) continue;
    for (const key of Object.keys(rec.value)) {
      if (!rec.read.has(key)) errors.push(`${name}: unknown field ${rec.where}/${key}`);
    }
  }
  return errors;
}

module.exports = { schemaErrors, modelClass, objectName };
