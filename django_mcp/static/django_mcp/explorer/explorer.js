/*
 * The MCP explorer: forms generated from each declaration's definition, sent to the real
 * endpoint as the signed-in user (same-origin fetch: the session cookie authenticates, the
 * Origin header passes the endpoint's origin check). Every request carries the mirrored
 * headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*) and the request _meta.
 * An input_required result is answered through a form and the call retried with
 * inputResponses and requestState. No framework, no CDN.
 */
(function () {
  "use strict";

  var META = "io.modelcontextprotocol/";
  var config = JSON.parse(document.getElementById("mcp-explorer-config").textContent);
  var nextId = 1;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { node.appendChild(child); });
    return node;
  }

  /* A header value as the transport wants it: plain ASCII, else the base64 sentinel. */
  function headerValue(value) {
    var text = String(value);
    var plain = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(text) && !/^=\?base64\?/.test(text);
    if (plain) return text;
    var bytes = new TextEncoder().encode(text);
    var binary = "";
    bytes.forEach(function (b) { binary += String.fromCharCode(b); });
    return "=?base64?" + btoa(binary) + "?=";
  }

  /*
   * The $defs entry a local "#/$defs/<name>" names, or undefined. <name> is a JSON Pointer
   * token inside a URI fragment: percent-decoded first, then "~1" is "/" and "~0" is "~"
   * (RFC 6901 sections 4 and 6), as the server's validator reads it. Only an own entry
   * counts: a bare lookup would find Object.prototype's "constructor" or "toString".
   */
  function definitionAt(ref, root) {
    var defs = root && root.$defs;
    if (typeof ref !== "string" || ref.indexOf("#/$defs/") !== 0 || !defs || typeof defs !== "object") return undefined;
    var token;
    try { token = decodeURIComponent(ref.slice(8)); } catch (e) { return undefined; }
    if (token.indexOf("/") >= 0) return undefined;  /* deeper than one entry: not followed */
    token = token.replace(/~1/g, "/").replace(/~0/g, "~");
    return Object.prototype.hasOwnProperty.call(defs, token) ? defs[token] : undefined;
  }

  /* Follow local $refs (a chain of them too: the entry's own $ref is kept for the next
     round, the referring schema's keywords win) and unwrap Optional (anyOf with null) to
     the schema to render. Copies are record()s: on a {}, a keyword named "__proto__"
     (which JSON Schema ignores) would become the copy's prototype, its "type" inherited. */
  function resolve(schema, root) {
    var seen = 0;
    while (schema && seen < 10) {
      seen += 1;
      if (typeof schema.$ref === "string" && schema.$ref.indexOf("#/$defs/") === 0) {
        var siblings = Object.assign(record(), schema);
        delete siblings.$ref;
        schema = Object.assign(record(), definitionAt(schema.$ref, root), siblings);
      } else if (schema.anyOf) {
        var others = schema.anyOf.filter(function (s) { return s.type !== "null"; });
        if (others.length !== 1) return schema;
        var nullable = others.length < schema.anyOf.length;
        /* The outer description and default win only when given: Pydantic puts them
           outside, a hand-written schema may put them on the inner one. */
        var unwrapped = Object.assign(record(), others[0], { nullable: nullable });
        if (schema.description !== undefined) unwrapped.description = schema.description;
        if (schema.default !== undefined) unwrapped.default = schema.default;
        schema = unwrapped;
      } else if (Array.isArray(schema.type) && schema.type.indexOf("null") >= 0 && schema.type.length === 2) {
        schema = Object.assign(record(), schema, { type: schema.type[0] === "null" ? schema.type[1] : schema.type[0], nullable: true });
      } else {
        return schema;
      }
    }
    return schema || {};
  }

  /*
   * One input for one property; returns {row, read} where read() gives the value or
   * undefined (left out of the arguments). An optional field the user has not touched is
   * left out, so the declaration's own default applies: its default is shown (a null
   * default as an empty field, never the text "null"), not sent. A boolean that may be
   * null, or is optional without a default, is a three-state select (unset, true, false).
   */
  function field(name, rawSchema, root, required) {
    var schema = resolve(rawSchema, root);
    var id = "f" + (nextId++);
    var label = el("label", { for: id, text: name + (required ? " *" : "") });
    var input;
    var kind = schema.enum ? "enum" : schema.type;
    var hasDefault = schema.default !== undefined && schema.default !== null;
    if (kind === "boolean" && (schema.nullable || (!required && !hasDefault))) kind = "tristate";
    if (kind === "enum") {
      input = el("select", { id: id, name: name });
      if (!required) input.appendChild(el("option", { value: "", text: "—" }));
      schema.enum.forEach(function (v) { input.appendChild(el("option", { value: JSON.stringify(v), text: String(v) })); });
    } else if (kind === "tristate") {
      input = el("select", { id: id, name: name });
      input.appendChild(el("option", { value: "", text: "— (not sent)" }));
      input.appendChild(el("option", { value: "true", text: "true" }));
      input.appendChild(el("option", { value: "false", text: "false" }));
    } else if (kind === "boolean") {
      input = el("input", { id: id, name: name, type: "checkbox" });
      if (schema.default === true) input.checked = true;
    } else if (kind === "integer" || kind === "number") {
      input = el("input", { id: id, name: name, type: "number", step: kind === "integer" ? "1" : "any" });
    } else if (kind === "string") {
      input = el("input", { id: id, name: name, type: "text", class: "vTextField" });
    } else {
      input = el("textarea", { id: id, name: name, rows: "3", class: "vLargeTextField", placeholder: "JSON" });
    }
    if (hasDefault && kind !== "boolean") {
      input.value = (kind === "string" || kind === "integer" || kind === "number") ? String(schema.default) : JSON.stringify(schema.default);
    }
    var touched = false;
    input.addEventListener("input", function () { touched = true; });
    input.addEventListener("change", function () { touched = true; });
    var help = el("div", { class: "help", text: (schema.type || (schema.enum ? "enum" : "JSON")) + (schema.nullable ? " or null" : "") + (required ? "" : " (optional" + (schema.default !== undefined ? ", default " + JSON.stringify(schema.default) : "") + ")") + (schema.description ? " — " + schema.description : "") });
    function read() {
      if (!required && !touched) return undefined;
      if (kind === "boolean") return input.checked;
      if (input.value === "") return undefined;
      if (kind === "tristate") return input.value === "true";
      if (kind === "enum") return JSON.parse(input.value);
      if (kind === "integer") return parseInt(input.value, 10);
      if (kind === "number") return Number(input.value);
      if (kind === "string") return input.value;
      return JSON.parse(input.value);
    }
    return { row: el("div", { class: "form-row" }, [label, input, help]), read: read, schema: schema, name: name };
  }

  function objectFields(schema, container) {
    var props = (schema && schema.properties) || {};
    var required = (schema && schema.required) || [];
    return Object.keys(props).map(function (name) {
      var f = field(name, props[name], schema, required.indexOf(name) >= 0);
      container.appendChild(f.row);
      return f;
    });
  }

  /* An object keyed by names that come from data (schemas, server replies): on a {},
     obj["__proto__"] = v sets the prototype instead of a property, and the key would be
     lost (and JSON.stringify would not send it). A null-prototype object keeps it. */
  function record() {
    return Object.create(null);
  }

  function collect(fields) {
    var out = record();
    fields.forEach(function (f) {
      var value = f.read();
      if (value !== undefined) out[f.name] = value;
    });
    return out;
  }

  function templateNames(template) {
    var names = [];
    (template.match(/\{[^}]+\}/g) || []).forEach(function (expr) {
      expr.slice(1, -1).replace(/^[+#./;?&]/, "").split(",").forEach(function (n) {
        names.push(n.replace(/[*]$|:\d+$/, ""));
      });
    });
    return names;
  }

  /* RFC 6570 for the simple cases the explorer needs: {x}, {+x}, {/x}, {?x,y}. */
  function expand(template, values) {
    return template.replace(/\{([+#./;?&]?)([^}]+)\}/g, function (_, op, list) {
      var parts = list.split(",").map(function (n) { return n.replace(/[*]$|:\d+$/, ""); })
        .filter(function (n) { return values[n] !== undefined && values[n] !== ""; });
      var enc = op === "+" || op === "#" ? encodeURI : encodeURIComponent;
      if (op === "?" || op === "&") {
        return parts.length ? op + parts.map(function (n) { return n + "=" + enc(values[n]); }).join("&") : "";
      }
      var sep = op === "/" ? "/" : op === "." ? "." : ",";
      var prefix = op === "+" ? "" : op;
      return parts.length ? prefix + parts.map(function (n) { return enc(values[n]); }).join(sep) : "";
    });
  }

  function send(method, params, definition) {
    var body = {
      jsonrpc: "2.0",
      id: nextId++,
      method: method,
      params: Object.assign({}, params, {
        _meta: (function () {
          var meta = {};
          meta[META + "protocolVersion"] = config.revision;
          meta[META + "clientCapabilities"] = { elicitation: { form: {} } };
          meta[META + "clientInfo"] = { name: "django-mcp-explorer", version: "1" };
          return meta;
        })()
      })
    };
    var headers = {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": config.revision,
      "Mcp-Method": method
    };
    if (method === "tools/call" || method === "prompts/get") headers["Mcp-Name"] = headerValue(params.name);
    if (method === "resources/read") headers["Mcp-Name"] = headerValue(params.uri);
    if (method === "tools/call" && definition && definition.inputSchema) {
      var props = definition.inputSchema.properties || {};
      Object.keys(props).forEach(function (name) {
        var header = props[name]["x-mcp-header"];
        var value = (params.arguments || {})[name];
        if (header && value !== undefined && value !== null) headers["Mcp-Param-" + header] = headerValue(value);
      });
    }
    return fetch(config.endpoint, {
      method: "POST", credentials: "same-origin", headers: headers, body: JSON.stringify(body)
    }).then(function (response) {
      return response.text().then(function (text) {
        var parsed;
        try { parsed = JSON.parse(text); } catch (e) { parsed = text; }
        return { status: response.status, body: parsed };
      });
    });
  }

  function show(entry, reply) {
    var out = entry.querySelector(".mcp-result");
    out.hidden = false;
    out.textContent = "HTTP " + reply.status + "\n" + JSON.stringify(reply.body, null, 2);
    out.dataset.status = String(reply.status);
  }

  /* Forms for each input request; on submit, retry the call with the answers. */
  function askForInput(entry, method, params, definition, result) {
    var box = entry.querySelector(".mcp-input-request");
    box.innerHTML = "";
    box.hidden = false;
    var readers = record();
    Object.keys(result.inputRequests || {}).forEach(function (key) {
      var request = result.inputRequests[key];
      var part = el("fieldset", { class: "module", "data-input-key": key }, [el("h3", { text: "Input requested: " + request.method + " (" + key + ")" })]);
      if (request.method === "elicitation/create" && request.params.requestedSchema) {
        part.appendChild(el("p", { class: "mcp-question", text: request.params.message || "" }));
        var action = el("select", { name: "action" }, ["accept", "decline", "cancel"].map(function (a) { return el("option", { value: a, text: a }); }));
        part.appendChild(el("div", { class: "form-row" }, [el("label", { text: "action" }), action]));
        var fields = objectFields(request.params.requestedSchema, part);
        readers[key] = function () {
          return action.value === "accept" ? { action: "accept", content: collect(fields) } : { action: action.value };
        };
      } else {
        part.appendChild(el("p", { text: JSON.stringify(request.params || {}) }));
        var raw = el("textarea", { rows: "4", class: "vLargeTextField", placeholder: "The result, as JSON" });
        part.appendChild(raw);
        readers[key] = function () { return JSON.parse(raw.value); };
      }
      box.appendChild(part);
    });
    var answer = el("input", { type: "submit", value: "Answer and retry", class: "default" });
    var form = el("form", { class: "mcp-answer" }, [answer]);
    box.appendChild(form);
    answer.addEventListener("click", function (event) {
      event.preventDefault();
      var responses = record();
      try {
        Object.keys(readers).forEach(function (key) { responses[key] = readers[key](); });
      } catch (error) {
        show(entry, { status: 0, body: "Invalid JSON: " + error.message });
        return;
      }
      var retry = Object.assign({}, params, { inputResponses: responses, requestState: result.requestState });
      box.hidden = true;
      run(entry, method, retry, definition);
    });
  }

  function run(entry, method, params, definition) {
    send(method, params, definition).then(function (reply) {
      show(entry, reply);
      var result = reply.body && reply.body.result;
      if (result && result.resultType === "input_required") {
        var base = Object.assign({}, params);
        delete base.inputResponses;
        delete base.requestState;
        askForInput(entry, method, base, definition, result);
      }
    }).catch(function (error) {
      show(entry, { status: 0, body: String(error) });
    });
  }

  function setUp(entry) {
    var definition = JSON.parse(entry.querySelector(".mcp-json").textContent);
    var kind = entry.dataset.kind;
    var form = entry.querySelector(".mcp-form");
    var box = form.querySelector(".mcp-fields");
    var fields = [];
    if (kind === "tool") {
      fields = objectFields(definition.inputSchema, box);
    } else if (kind === "prompt") {
      var props = record();
      var required = [];
      (definition.arguments || []).forEach(function (arg) {
        props[arg.name] = { type: "string", description: arg.description };
        if (arg.required) required.push(arg.name);
      });
      fields = objectFields({ properties: props, required: required }, box);
    } else if (kind === "template") {
      var names = record();
      templateNames(definition.uriTemplate).forEach(function (n) { names[n] = { type: "string" }; });
      fields = objectFields({ properties: names, required: Object.keys(names) }, box);
    }
    if (!config.endpoint) {
      form.querySelector("[type=submit]").disabled = true;
      return;
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var values;
      try {
        values = collect(fields);
      } catch (error) {
        show(entry, { status: 0, body: "Invalid JSON: " + error.message });
        return;
      }
      if (kind === "tool") run(entry, "tools/call", { name: definition.name, arguments: values }, definition);
      else if (kind === "prompt") run(entry, "prompts/get", { name: definition.name, arguments: values }, definition);
      else if (kind === "template") run(entry, "resources/read", { uri: expand(definition.uriTemplate, values) }, definition);
      else run(entry, "resources/read", { uri: definition.uri }, definition);
    });
  }

  document.querySelectorAll(".mcp-entry").forEach(setUp);
})();
