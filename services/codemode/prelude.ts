// The JavaScript that runs inside QuickJS before the script, once per execution. It is one
// function expression; the worker calls it with the host functions (`call`, `read`, `log`,
// `fail`), the tool catalog as JSON, the limits and the attachments metadata as JSON, and it
// installs the script's whole world — `tools`, `search`, `console`, `attachments` — and hands back the helpers the worker uses at the boundary: `toJson`
// (a value out, checked against the limits), `fromJson` (a value in) and `describe` (an uncaught
// error as text). It captures every built-in it uses first, so a script that redefines `JSON` or
// `Map` breaks only itself; the host re-checks everything that leaves anyway.
//
// Plain ES2020 in a string: no template literals, so it nests in this file's own.
export const PRELUDE_SOURCE = String.raw`(function (host, catalogJson, L, attachmentsJson) {
  "use strict";
  var G = globalThis, stringify = JSON.stringify, parse = JSON.parse, isArray = Array.isArray;
  var keys = Object.keys, freeze = Object.freeze, defineProperty = Object.defineProperty, is = Object.is;
  var MapC = Map, ErrorC = Error, TypeErrorC = TypeError, StringC = String, PromiseC = Promise, DateC = Date, RegExpC = RegExp, SetC = Set;
  var mapGet = Map.prototype.get, mapHas = Map.prototype.has, mapSet = Map.prototype.set, apply = Reflect.apply;
  var hostCall = host.call, hostRead = host.read, hostLog = host.log, hostFail = host.fail;
  var Uint8ArrayC = Uint8Array, isSafeInteger = Number.isSafeInteger;
  var IDENT = /^[A-Za-z_$][\w$]*$/;

  function fail(code, message) { hostFail(code, message); return new ErrorC(message); }

  // A value as JSON text under the limits (undefined when JSON has none for it).
  function toJson(value, what) {
    var depths = new MapC();
    return stringify(value, function (key, v) {
      var d = apply(mapHas, depths, [this]) ? apply(mapGet, depths, [this]) : 0;
      if (typeof v === "string") {
        if (v.length > L.maxString) throw fail("string_too_long", "A string in " + what + " is " + v.length + " code units long; the limit is " + L.maxString + ".");
      } else if (typeof v === "bigint") {
        throw new TypeErrorC(what + " contains a BigInt, which is not JSON data.");
      } else if (typeof v === "object" && v !== null) {
        if (d + 1 > L.maxDepth) throw fail("value_too_deep", what.charAt(0).toUpperCase() + what.slice(1) + " nests deeper than " + L.maxDepth + " levels.");
        if (isArray(v) && v.length > L.maxArray) throw fail("array_too_long", "An array in " + what + " has " + v.length + " elements; the limit is " + L.maxArray + ".");
        apply(mapSet, depths, [v, d + 1]);
      }
      return v;
    });
  }
  function fromJson(json) { return json === undefined ? undefined : parse(json); }

  // console: values rendered like Node's util.inspect, shallower and shorter.
  function quote(s) { return stringify(s); }
  function inspect(v, depth, seen) {
    switch (typeof v) {
      case "string": return quote(v);
      case "number": return is(v, -0) ? "-0" : StringC(v);
      case "bigint": return StringC(v) + "n";
      case "symbol": return v.toString();
      case "undefined": return "undefined";
      case "boolean": return StringC(v);
      case "function": return "[Function: " + (v.name || "(anonymous)") + "]";
    }
    if (v === null) return "null";
    if (seen.indexOf(v) !== -1) return "[Circular]";
    if (v instanceof ErrorC) return v.name + ": " + v.message;
    if (v instanceof DateC) return isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
    if (v instanceof RegExpC) return StringC(v);
    if (v instanceof PromiseC) return "Promise {}";
    if (depth > L.consoleDepth) return isArray(v) ? "[Array]" : "[Object]";
    seen.push(v);
    var parts = [], more = 0, open = "{", close = "}", prefix = "";
    if (isArray(v)) {
      open = "["; close = "]";
      for (var i = 0; i < v.length; i++) { if (parts.length === 100) { more = v.length - i; break; } parts.push(inspect(v[i], depth + 1, seen)); }
    } else if (v instanceof MapC || v instanceof SetC) {
      var isMap = v instanceof MapC;
      prefix = (isMap ? "Map(" : "Set(") + v.size + ") ";
      v.forEach(function (value, key) {
        if (parts.length === 100) { more++; return; }
        parts.push(isMap ? inspect(key, depth + 1, seen) + " => " + inspect(value, depth + 1, seen) : inspect(value, depth + 1, seen));
      });
    } else {
      var ks = keys(v);
      for (var j = 0; j < ks.length; j++) {
        if (parts.length === 100) { more = ks.length - j; break; }
        parts.push((IDENT.test(ks[j]) ? ks[j] : quote(ks[j])) + ": " + inspect(v[ks[j]], depth + 1, seen));
      }
    }
    seen.pop();
    if (more > 0) parts.push("... " + more + " more item" + (more === 1 ? "" : "s"));
    return parts.length === 0 ? prefix + open + close : prefix + open + " " + parts.join(", ") + " " + close;
  }
  function format(args) {
    var out = [];
    for (var i = 0; i < args.length; i++) out.push(typeof args[i] === "string" ? args[i] : inspect(args[i], 1, []));
    return out.join(" ");
  }
  function cell(v) { return typeof v === "string" ? v : inspect(v, L.consoleDepth, []); }
  function table(data, columns) {
    if (data === null || typeof data !== "object") return format([data]);
    var rowKeys = isArray(data) ? data.map(function (_, i) { return StringC(i); }) : keys(data);
    var cols = isArray(columns) ? columns.map(StringC) : [], values = false;
    if (!isArray(columns)) rowKeys.forEach(function (k) {
      var row = data[k];
      if (row !== null && typeof row === "object") keys(row).forEach(function (c) { if (cols.indexOf(c) === -1) cols.push(c); });
      else values = true;
    });
    var header = ["(index)"].concat(cols, values ? ["Values"] : []);
    var rows = rowKeys.map(function (k) {
      var row = data[k], isObject = row !== null && typeof row === "object";
      return [k].concat(cols.map(function (c) { return isObject && c in row ? cell(row[c]) : ""; }), values ? [isObject ? "" : cell(row)] : []);
    });
    var line = function (cells) { return "| " + cells.join(" | ") + " |"; };
    return [line(header), line(header.map(function () { return "---"; }))].concat(rows.map(line)).join("\n");
  }
  var consoleObject = {};
  ["log", "info", "debug", "warn", "error", "dir"].forEach(function (level) {
    consoleObject[level] = function () { hostLog(level === "dir" || level === "debug" ? "log" : level, format(Array.prototype.slice.call(arguments))); };
  });
  consoleObject.table = function (data, columns) { hostLog("log", table(data, columns)); };

  // tools and search.
  var catalog = parse(catalogJson), tools = {};
  catalog.forEach(function (entry) {
    var fn = async function (input) {
      var json = toJson(input === undefined ? {} : input, "the input of " + entry.path);
      return fromJson(await hostCall(entry.id, json));
    };
    defineProperty(fn, "name", { value: entry.id });
    tools[entry.id] = fn;
  });
  function search(request) {
    var query = typeof request === "string" ? request : request !== null && typeof request === "object" ? request.query : undefined;
    if (typeof query !== "string") throw new TypeErrorC("search expects { query: string }.");
    var terms = query.toLowerCase().split(/[^\p{L}\p{N}_$]+/u).filter(Boolean), found = [];
    catalog.forEach(function (entry) {
      var id = entry.id.toLowerCase(), text = entry.description.toLowerCase(), score = terms.length === 0 ? 1 : 0;
      terms.forEach(function (term) {
        if (id === term) score += 10; else if (id.indexOf(term) !== -1) score += 5;
        if (text.indexOf(term) !== -1) score += 1;
      });
      if (score > 0) found.push({ score: score, entry: entry });
    });
    found.sort(function (a, b) { return b.score - a.score || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0); });
    return found.slice(0, L.maxSearch).map(function (f) { return parse(stringify(f.entry)); });
  }

  // An uncaught error as the model reads it: name, message, code and the script's own frames.
  function describe(e) {
    if (e !== null && typeof e === "object" && typeof e.message === "string") {
      var text = (typeof e.name === "string" ? e.name : "Error") + ": " + e.message;
      if (typeof e.code === "string") text += " (code: " + e.code + ")";
      var frames = typeof e.stack === "string" ? e.stack.split("\n").filter(function (f) { return f.indexOf("script.js") !== -1; }) : [];
      return frames.length > 0 ? text + "\n" + frames.join("\n") : text;
    }
    return "Uncaught " + inspect(e, 1, []);
  }

  // attachments: the metadata array (frozen entries { name, mimeType, bytes, digest }) with one
  // resource function, read(offset, length[, { encoding }]), over the files' concatenated bytes.
  var attachments = parse(attachmentsJson).map(function (entry) { return freeze(entry); });
  function attachmentError(code, message) { var e = new ErrorC(message); e.name = "AttachmentError"; e.code = code; return e; }
  defineProperty(attachments, "read", {
    value: async function read(offset, length, options) {
      var encoding = options !== undefined && options !== null ? options.encoding : undefined;
      if (encoding !== undefined && encoding !== "bytes" && encoding !== "base64") throw attachmentError("attachment_invalid_read", "attachments.read: encoding is 'bytes' or 'base64'.");
      if (!isSafeInteger(offset) || offset < 0 || !isSafeInteger(length) || length < 0) throw attachmentError("attachment_invalid_read", "attachments.read(offset, length) takes two non-negative integers.");
      var value = await hostRead(offset, length, encoding === "base64" ? "base64" : "bytes");
      return encoding === "base64" ? fromJson(value) : new Uint8ArrayC(value);
    },
    writable: false, enumerable: false, configurable: false,
  });
  freeze(attachments);

  [["tools", freeze(tools)], ["search", search], ["console", freeze(consoleObject)], ["attachments", attachments]].forEach(function (pair) {
    defineProperty(G, pair[0], { value: pair[1], writable: false, enumerable: false, configurable: false });
  });
  return { toJson: toJson, fromJson: fromJson, describe: describe };
})`;
