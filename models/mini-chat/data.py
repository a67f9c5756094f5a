"""The mini-chat model's training and test conversations, generated from a seed.

Every conversation is an OpenAI chat request (messages, and tools or a response format where the
task has them) with the answer the model should give (`target`: text, or tool calls) and, for the
evaluation, what a correct answer is (`check`). The tasks are a closed world the generator knows:
arithmetic, unit conversions, dates, lookups in a table or a passage given in the prompt, JSON
objects that follow a schema given in the prompt, tool calls that pick the named tool and copy its
arguments from the prompt, a tool's result answered, several turns, and short prose. All of it is
generated here (no outside text), under the project's licence (Apache-2.0).

The test set is drawn from its own random stream, and any test prompt that also occurs in the
training set is dropped, so the evaluation never sees a training conversation.

    python3 models/mini-chat/data.py --out .train --train 60000 --test 600 --seed 1
"""

import argparse
import json
import random

NAMES = (
    "Mia Noah Emma Liam Ava Lucas Zoe Omar Lena Ravi Aiko Tomas Ines Yusuf Maya Felix Nora Ivan "
    "Sara Kofi Lea Hugo Anya Diego Elif Jonas Priya Marco Hana Theo Clara Amir Rosa Kenji Ada "
    "Victor Lina Paolo Greta Samir Ida Oscar Nina Mateo Freya Arjun Chloe Emil Sofia Tariq"
).split()
CITIES = (
    "Paris Tokyo Lima Oslo Cairo Delhi Rome Berlin Madrid Lisbon Seoul Nairobi Toronto Sydney "
    "Dublin Vienna Prague Athens Quito Hanoi Bogota Warsaw Helsinki Manila Dakar Riga Tunis Bern "
    "Accra Zagreb Austin Denver Boston Chicago Kyoto Osaka Porto Lyon Munich Milan"
).split()
COLORS = "red blue green yellow purple orange black white gray pink brown teal".split()
ANIMALS = "cat dog horse owl fox rabbit whale tiger eagle bear wolf otter deer frog".split()
FRUITS = "apple banana cherry mango pear plum grape lemon peach melon kiwi fig".split()
ITEMS = "book lamp chair phone bottle pencil camera bicycle clock kettle guitar backpack".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = (
    "January February March April May June July August September October November December"
).split()
MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
SYSTEMS = [
    "You are a helpful assistant.",
    "You are a helpful assistant. Answer briefly.",
    "You are gpumesh mini-chat, a small assistant. Keep answers short and exact.",
    "You are a concise assistant.",
    "Answer the user's question.",
]


class Gen:
    """One random stream of conversations."""

    def __init__(self, seed, copy_share=0.0, emphasis=False):
        self.r = random.Random(seed)
        self.copy_share = copy_share
        # The training stream weights the tasks a small model learns slowest (arithmetic, lookups,
        # "what was my first question"); the test stream keeps the even mix, so the evaluation's
        # figures mean the same thing from one model to the next.
        self.emphasis = emphasis

    def pick(self, xs):
        return self.r.choice(xs)

    def chance(self, p):
        return self.r.random() < p

    # ---- answers with one exact value ----

    def arithmetic(self):
        r = self.r
        op = self.pick(["+", "+", "-", "*"])
        if op != "*" and self.emphasis and self.chance(0.3):
            return self.column_fact(op)
        if op == "*":
            a, b = r.randint(0, 12), r.randint(0, 12)
            value = a * b
        elif op == "+":
            a, b = r.randint(0, 99), r.randint(0, 99)
            value = a + b
        else:
            a = r.randint(0, 99)
            b = r.randint(0, a)
            value = a - b
        word = {"+": "plus", "-": "minus", "*": "times"}[op]
        sym = {"+": "+", "-": "-", "*": "*"}[op]
        question = self.pick(
            [
                f"What is {a} {sym} {b}?",
                f"What is {a} {word} {b}?",
                f"Calculate {a} {sym} {b}.",
                f"{a} {sym} {b} = ?",
                f"Compute {a} {word} {b}.",
                f"How much is {a} {sym} {b}?",
            ]
        )
        shown = "×" if op == "*" and self.chance(0.2) else sym
        steps = self.column_steps(op, a, b)
        # The problem restated first (copied from the prompt in one piece), then its columns.
        answer = f"{a} {shown} {b}: {steps}so {a} {shown} {b} = {value}." if steps else f"{a} {shown} {b} = {value}."
        return question, answer, str(value)

    def column_fact(self, op):
        """One of the single-digit facts the worked columns are made of ("6 + 9 = 15", "16 - 9 = 7"),
        asked alone: the columns' misses are these facts, seen too rarely inside longer answers."""
        r = self.r
        if op == "+":
            a, b = r.randint(0, 9), r.randint(0, 9)
            value = a + b
        else:
            b, value = r.randint(0, 9), r.randint(0, 9)
            a = b + value
        question = self.pick([f"What is {a} {op} {b}?", f"{a} {op} {b} = ?", f"Calculate {a} {op} {b}.", f"How much is {a} {op} {b}?"])
        return question, f"{a} {op} {b} = {value}.", str(value)

    @staticmethod
    def column_steps(op, a, b):
        """Sums and differences of two-digit numbers worked column by column, as on paper: each step
        is one single-digit fact, and the result is the tens step's digits followed by the ones
        digit. A 3 M-parameter model cannot add 76 + 89 in one step; it can do each column."""
        if op == "*" or (a < 10 and b < 10):
            return ""
        a1, a10, b1, b10 = a % 10, a // 10, b % 10, b // 10
        if op == "+":
            ones = a1 + b1
            carry = ones // 10
            tens = a10 + b10 + carry
            tens_text = f"{a10} + {b10} + 1 = {tens}" if carry else f"{a10} + {b10} = {tens}"
            return f"ones {a1} + {b1} = {ones}{', carry 1' if carry else ''}, tens {tens_text}, "
        borrow = 1 if a1 < b1 else 0
        ones = a1 + 10 * borrow - b1
        tens = a10 - b10 - borrow
        ones_text = f"{a1 + 10 * borrow} - {b1} = {ones}, borrow 1" if borrow else f"{a1} - {b1} = {ones}"
        tens_text = f"{a10} - {b10} - 1 = {tens}" if borrow else f"{a10} - {b10} = {tens}"
        return f"ones {ones_text}, tens {tens_text}, "

    def conversion(self):
        r = self.r
        units = [
            ("kilometers", "meters", 1000, 1, 50),
            ("meters", "centimeters", 100, 1, 50),
            ("kilograms", "grams", 1000, 1, 50),
            ("liters", "milliliters", 1000, 1, 50),
            ("hours", "minutes", 60, 1, 12),
            ("minutes", "seconds", 60, 1, 12),
            ("days", "hours", 24, 1, 10),
            ("weeks", "days", 7, 1, 12),
            ("meters", "millimeters", 1000, 1, 20),
            ("dollars", "cents", 100, 1, 50),
        ]
        src, dst, factor, lo, hi = self.pick(units)
        n = r.randint(lo, hi)
        value = n * factor
        question = self.pick(
            [
                f"Convert {n} {src} to {dst}.",
                f"How many {dst} are in {n} {src}?",
                f"What is {n} {src} in {dst}?",
                f"{n} {src} is how many {dst}?",
            ]
        )
        answer = f"{n} {src} is {value} {dst}."
        return question, answer, str(value)

    def dates(self):
        r = self.r
        kind = r.randint(0, 5)
        if kind == 0:
            i = r.randint(0, 6)
            q = self.pick([f"What day comes after {WEEKDAYS[i]}?", f"Which day follows {WEEKDAYS[i]}?"])
            v = WEEKDAYS[(i + 1) % 7]
            return q, f"The day after {WEEKDAYS[i]} is {v}.", v
        if kind == 1:
            i = r.randint(0, 6)
            v = WEEKDAYS[(i - 1) % 7]
            return f"What day comes before {WEEKDAYS[i]}?", f"The day before {WEEKDAYS[i]} is {v}.", v
        if kind == 2:
            i = r.randint(0, 11)
            v = MONTHS[(i + 1) % 12]
            q = self.pick([f"What month comes after {MONTHS[i]}?", f"Which month follows {MONTHS[i]}?"])
            return q, f"The month after {MONTHS[i]} is {v}.", v
        if kind == 3:
            i = r.randint(0, 11)
            v = str(MONTH_DAYS[i])
            return (
                f"How many days are in {MONTHS[i]}?",
                f"{MONTHS[i]} has {v} days" + (" (29 in a leap year)." if i == 1 else "."),
                v,
            )
        if kind == 4:
            y, m = r.randint(1990, 2035), r.randint(1, 12)
            d = r.randint(1, MONTH_DAYS[m - 1])
            y2, m2, d2 = y, m, d + 1
            if d2 > MONTH_DAYS[m - 1] and not (m == 2 and d == 28 and y % 4 == 0):
                d2, m2 = 1, m + 1
                if m2 > 12:
                    m2, y2 = 1, y + 1
            a, b = f"{y}-{m:02d}-{d:02d}", f"{y2}-{m2:02d}-{d2:02d}"
            return f"What is the date one day after {a}?", f"One day after {a} is {b}.", b
        i = r.randint(0, 11)
        v = str(i + 1)
        return f"What is the number of the month {MONTHS[i]}?", f"{MONTHS[i]} is month {v}.", v

    def table_lookup(self):
        r = self.r
        people = r.sample(NAMES, r.randint(3, 6))
        rows = [(p, self.pick(CITIES), r.randint(18, 90), self.pick(COLORS)) for p in people]
        header = "name | city | age | favorite color"
        table = "\n".join([header] + [f"{n} | {c} | {a} | {col}" for n, c, a, col in rows])
        n, c, a, col = self.pick(rows)
        kind = r.randint(0, 2)
        if kind == 0:
            q, ans, v = f"How old is {n}?", f"{n} is {a} years old.", str(a)
        elif kind == 1:
            q, ans, v = f"Which city does {n} live in?", f"{n} lives in {c}.", c
        else:
            q, ans, v = f"What is {n}'s favorite color?", f"{n}'s favorite color is {col}.", col
        # The row first: copying what follows "Name |" in the prompt is one step of attention; the
        # answer then reads its field from the row just written.
        return f"Here is a table:\n{table}\n\n{q}", f"Row: {n} | {c} | {a} | {col}. {ans}", v

    def passage_lookup(self):
        r = self.r
        facts = []
        for _ in range(r.randint(3, 5)):
            kind = r.randint(0, 2)
            name = self.pick(NAMES)
            if kind == 0:
                item, n = self.pick(ITEMS), r.randint(2, 40)
                facts.append((f"{name} has {n} {item}s.", f"How many {item}s does {name} have?", f"{name} has {n} {item}s.", str(n)))
            elif kind == 1:
                city = self.pick(CITIES)
                facts.append((f"{name} works in {city}.", f"Where does {name} work?", f"{name} works in {city}.", city))
            else:
                animal = self.pick(ANIMALS)
                facts.append((f"{name}'s pet is a {animal}.", f"What is {name}'s pet?", f"{name}'s pet is a {animal}.", animal))
        passage = " ".join(f[0] for f in facts)
        _, q, ans, v = self.pick(facts)
        # A name may occur twice; the question's answer is the first fact about it in the passage.
        for fact in facts:
            if fact[1] == q:
                ans, v = fact[2], fact[3]
                break
        return f"Read this: {passage}\n{q}", ans, v

    # ---- JSON that follows a schema given in the prompt ----

    def json_object(self):
        r = self.r
        name, city, age = self.pick(NAMES), self.pick(CITIES), r.randint(18, 90)
        color, animal, fruit = self.pick(COLORS), self.pick(ANIMALS), self.pick(FRUITS)
        n = r.randint(1, 30)
        fields = [
            ("name", "string", name),
            ("city", "string", city),
            ("age", "integer", age),
            ("color", "string", color),
            ("pet", "string", animal),
            ("fruit", "string", fruit),
            ("count", "integer", n),
            ("active", "boolean", self.chance(0.5)),
        ]
        chosen = r.sample(fields, r.randint(2, 4))
        facts = []
        for key, _, value in chosen:
            facts.append(
                {
                    "name": f"the name is {value}",
                    "city": f"the city is {value}",
                    "age": f"the age is {value}",
                    "color": f"the color is {value}",
                    "pet": f"the pet is a {value}",
                    "fruit": f"the fruit is {value}",
                    "count": f"the count is {value}",
                    "active": f"active is {'true' if value else 'false'}",
                }[key]
            )
        r.shuffle(facts)
        schema = {
            "type": "object",
            "properties": {k: {"type": t} for k, t, _ in chosen},
            "required": [k for k, _, _ in chosen],
            "additionalProperties": False,
        }
        obj = {k: v for k, _, v in chosen}
        text = "; ".join(facts)
        style = r.randint(0, 3)
        if style == 3:
            # The Vercel AI SDK's JSON mode (generateObject on an OpenAI-compatible provider): the
            # schema in a system message, its own words around it, the request in the user's turn.
            compact = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", **schema}, separators=(",", ":"))
            system = f"JSON schema:\n{compact}\nYou MUST answer with a JSON object that matches the JSON schema above."
            prompt = (system, f"Extract as JSON: {text}.")
        elif style == 0:
            prompt = f"Return a JSON object that follows this schema: {json.dumps(schema)}\nFacts: {text}."
        elif style == 1:
            keys = ", ".join(f"{k} ({t})" for k, t, _ in chosen)
            prompt = f"Give me JSON with the keys {keys}. {text[0].upper() + text[1:]}."
        else:
            prompt = f"Extract as JSON matching {json.dumps(schema)}: {text}."
        sep = (", ", ": ") if self.chance(0.5) else (",", ":")
        return prompt, json.dumps(obj, separators=sep), {"schema": schema, "value": obj}

    # ---- tools ----

    TOOLS = [
        ("get_weather", "Get the current weather in a city", [("city", "string", "city")], "What's the weather in {city}?", "weather"),
        ("get_time", "Get the local time in a city", [("city", "string", "city")], "What time is it in {city}?", "time"),
        ("search_flights", "Search flights between two cities", [("origin", "string", "city"), ("destination", "string", "city")], "Find flights from {origin} to {destination}.", "flights"),
        ("convert_currency", "Convert an amount from one currency to another", [("amount", "number", "num"), ("from", "string", "cur"), ("to", "string", "cur")], "Convert {amount} {from} to {to}.", "currency"),
        ("send_email", "Send an email to a person", [("to", "string", "name"), ("subject", "string", "subject")], "Send an email to {to} about {subject}.", "email"),
        ("add_numbers", "Add two numbers", [("a", "number", "num"), ("b", "number", "num")], "Use the tool to add {a} and {b}.", "sum"),
        ("multiply", "Multiply two numbers", [("a", "number", "num"), ("b", "number", "num")], "Multiply {a} by {b} with the tool.", "product"),
        ("lookup_user", "Look up a user by name", [("name", "string", "name")], "Look up the user {name}.", "user"),
        ("set_reminder", "Set a reminder", [("text", "string", "subject"), ("minutes", "integer", "small")], "Remind me about {text} in {minutes} minutes.", "reminder"),
        ("get_stock_price", "Get the price of a stock by ticker symbol", [("symbol", "string", "ticker")], "What is the stock price of {symbol}?", "price"),
        ("translate", "Translate text into a language", [("text", "string", "phrase"), ("language", "string", "lang")], "Translate '{text}' into {language}.", "translation"),
        ("book_table", "Book a restaurant table", [("restaurant", "string", "restaurant"), ("people", "integer", "small")], "Book a table at {restaurant} for {people} people.", "booking"),
        ("get_population", "Get the population of a city", [("city", "string", "city")], "What is the population of {city}?", "population"),
        ("play_song", "Play a song by title", [("title", "string", "song")], "Play the song {title}.", "playing"),
        ("create_task", "Create a task in the to-do list", [("title", "string", "subject"), ("priority", "string", "priority")], "Create a {priority} priority task: {title}.", "task"),
        ("get_distance", "Get the distance between two cities in kilometers", [("from", "string", "city"), ("to", "string", "city")], "How far is it from {from} to {to}?", "distance"),
        ("random_number", "Pick a random number between min and max", [("min", "integer", "small"), ("max", "integer", "num")], "Pick a random number between {min} and {max}.", "number"),
        ("lookup_word", "Look up the meaning of a word", [("word", "string", "word")], "What does the word {word} mean? Use the dictionary tool.", "meaning"),
    ]

    VERBS = "fetch create delete update find cancel check list reserve archive open close rate share order track".split()
    NOUNS = "invoice ticket order account note file profile booking package report playlist meeting recipe device photo".split()
    PARAMS = [("id", "integer", "num"), ("query", "string", "word"), ("city", "string", "city"), ("user", "string", "name"), ("count", "integer", "small"), ("label", "string", "color"), ("title", "string", "subject")]

    def synthetic_tool(self):
        """A tool made up here: its name must be read from the prompt, not remembered."""
        verb, noun = self.pick(self.VERBS), self.pick(self.NOUNS)
        params = self.r.sample(self.PARAMS, self.r.randint(1, 2))
        name = self.pick([f"{verb}_{noun}", f"{verb}{noun.capitalize()}", f"{noun}_{verb}"])
        slots = " and ".join(f"{p} {{{p}}}" for p, _, _ in params)
        template = self.pick([f"{verb.capitalize()} the {noun} with {slots}.", f"Please {verb} a {noun}: {slots}.", f"Call {name} with {slots}."])
        return (name, f"{verb.capitalize()} a {noun}", params, template, noun)

    def fill(self, kind):
        r = self.r
        return {
            "city": lambda: self.pick(CITIES),
            "num": lambda: r.randint(1, 500),
            "small": lambda: r.randint(1, 12),
            "cur": lambda: self.pick(["USD", "EUR", "JPY", "GBP", "CHF", "CAD", "INR"]),
            "name": lambda: self.pick(NAMES),
            "subject": lambda: self.pick(["the meeting", "lunch", "the report", "the trip", "groceries", "the invoice", "the party"]),
            "ticker": lambda: self.pick(["AAPL", "MSFT", "NVDA", "AMZN", "TSLA", "GOOG", "META", "IBM"]),
            "phrase": lambda: self.pick(["good morning", "thank you", "where is the station", "see you soon", "hello"]),
            "lang": lambda: self.pick(["French", "Spanish", "German", "Japanese", "Italian"]),
            "restaurant": lambda: self.pick(["Luigi's", "The Blue Door", "Sakura", "Casa Rosa", "Green Leaf"]),
            "song": lambda: self.pick(["Yellow Sky", "Night Train", "Blue River", "Paper Moon", "Summer Rain"]),
            "priority": lambda: self.pick(["high", "low", "medium"]),
            "word": lambda: self.pick(ANIMALS + FRUITS),
            "color": lambda: self.pick(COLORS),
        }[kind]()

    def tool_schema(self, tool):
        name, desc, params, _, _ = tool
        props = {}
        for p, t, _ in params:
            props[p] = {"type": t}
            if self.chance(0.3):
                props[p]["description"] = f"The {p}"
        schema = {"type": "object", "properties": props, "required": [p for p, _, _ in params]}
        if self.chance(0.6):
            schema["additionalProperties"] = False
        if self.chance(0.15):
            schema["$schema"] = "http://json-schema.org/draft-07/schema#"
        out = {"type": "function", "function": {"name": name, "parameters": schema}}
        if self.chance(0.9):
            out["function"]["description"] = desc
        return out

    def tool_request(self, tool):
        args = {}
        for p, _, kind in tool[2]:
            v = self.fill(kind)
            while p in ("destination", "to") and kind == "city" and v in args.values():
                v = self.fill(kind)
            args[p] = v
        question = tool[3].format(**args)
        return question, args

    def tools_listed(self, must):
        others = [t for t in self.TOOLS if t[0] not in {m[0] for m in must}]
        listed = list(must) + self.r.sample(others, self.r.randint(0, 3))
        self.r.shuffle(listed)
        return [self.tool_schema(t) for t in listed]

    def tool_result(self, tool, args):
        r = self.r
        label = tool[4]
        values = {
            "weather": lambda: {"city": args.get("city"), "temperature_c": r.randint(-10, 38), "conditions": self.pick(["sunny", "cloudy", "rainy", "windy", "snowy"])},
            "time": lambda: {"city": args.get("city"), "time": f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}"},
            "sum": lambda: {"result": args["a"] + args["b"]},
            "product": lambda: {"result": args["a"] * args["b"]},
            "population": lambda: {"city": args.get("city"), "population": r.randint(50, 9000) * 1000},
            "price": lambda: {"symbol": args.get("symbol"), "price": round(r.uniform(5, 900), 2)},
            "distance": lambda: {"km": r.randint(20, 9000)},
        }
        if label in values:
            return values[label]()
        return {"status": "ok", "id": r.randint(1000, 9999)}

    def tool_answer(self, tool, args, result):
        label = tool[4]
        if label == "weather":
            return f"It is {result['temperature_c']}°C and {result['conditions']} in {args['city']}.", str(result["temperature_c"])
        if label == "time":
            return f"It is {result['time']} in {args['city']}.", result["time"]
        if label in ("sum", "product"):
            return f"The result is {result['result']}.", str(result["result"])
        if label == "population":
            return f"{args['city']} has a population of {result['population']}.", str(result["population"])
        if label == "price":
            return f"{args['symbol']} is trading at {result['price']}.", str(result["price"])
        if label == "distance":
            return f"It is {result['km']} km from {args['from']} to {args['to']}.", str(result["km"])
        return f"Done: the {label} request succeeded (id {result['id']}).", str(result["id"])

    def tool_call_convo(self):
        """A tool call picked and filled from the prompt; sometimes two at once."""
        t1 = self.synthetic_tool() if self.chance(0.4) else self.pick(self.TOOLS)
        q1, a1 = self.tool_request(t1)
        calls = [{"name": t1[0], "arguments": a1}]
        question = q1
        must = [t1]
        if self.chance(0.3 if self.emphasis else 0.15):
            t2 = self.pick([t for t in self.TOOLS if t[0] != t1[0]])
            q2, a2 = self.tool_request(t2)
            calls.append({"name": t2[0], "arguments": a2})
            question = f"{q1} Also: {q2[0].lower() + q2[1:]}"
            must.append(t2)
        tools = self.tools_listed(must)
        messages = self.system_maybe() + [{"role": "user", "content": question}]
        return messages, tools, calls

    def convo_tool_call(self):
        messages, tools, calls = self.tool_call_convo()
        return {"task": "tool_call", "messages": messages, "tools": tools, "target": {"tool_calls": calls}, "check": {"tool_calls": calls}}

    def convo_tool_result(self):
        messages, tools, calls = self.tool_call_convo()
        call = calls[0]
        tool = next((t for t in self.TOOLS if t[0] == call["name"]), (call["name"], "", [], "", "request"))
        call_id = "call_" + "".join(self.pick("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(self.r.choice([8, 12, 24])))
        result = self.tool_result(tool, call["arguments"])
        answer, value = self.tool_answer(tool, call["arguments"], result)
        messages = messages + [
            {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]},
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result, separators=(",", ":") if self.chance(0.5) else None)},
        ]
        return {"task": "tool_result", "messages": messages, "tools": tools, "target": {"content": answer}, "check": {"contains": value}}

    def convo_no_tool(self):
        """Tools listed, but the question needs none: answered in text."""
        q, a, v = self.exact_question()
        tools = self.tools_listed([])[:3] or [self.tool_schema(self.pick(self.TOOLS))]
        messages = self.system_maybe() + [{"role": "user", "content": q}]
        return {"task": "exact", "messages": messages, "tools": tools, "target": {"content": a}, "check": {"value": v}}

    # ---- conversations ----

    def system_maybe(self):
        return [{"role": "system", "content": self.pick(SYSTEMS)}] if self.chance(0.5) else []

    def exact_question(self):
        if self.emphasis:
            return self.pick([self.arithmetic] * 3 + [self.conversion, self.dates] + [self.table_lookup] * 2 + [self.passage_lookup] * 2)()
        return self.pick([self.arithmetic, self.arithmetic, self.conversion, self.dates, self.table_lookup, self.passage_lookup])()

    def convo_exact(self):
        q, a, v = self.exact_question()
        return {"task": "exact", "messages": self.system_maybe() + [{"role": "user", "content": q}], "target": {"content": a}, "check": {"value": v}}

    def convo_json(self):
        prompt, answer, check = self.json_object()
        if isinstance(prompt, tuple):
            messages = [{"role": "system", "content": prompt[0]}, {"role": "user", "content": prompt[1]}]
        else:
            messages = self.system_maybe() + [{"role": "user", "content": prompt}]
        return {"task": "json", "messages": messages, "target": {"content": answer}, "check": {"json": check}}

    def convo_multi_turn(self):
        messages = self.system_maybe()
        for _ in range(self.r.randint(1, 3)):
            q, a, _ = self.exact_question()
            messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
        if self.chance(0.5 if self.emphasis else 0.3):
            first = next(m["content"] for m in messages if m["role"] == "user")
            messages.append({"role": "user", "content": "What was my first question?"})
            return {"task": "multi_turn", "messages": messages, "target": {"content": f"Your first question was: {first}"}, "check": {"contains": first}}
        q, a, v = self.exact_question()
        messages.append({"role": "user", "content": q})
        return {"task": "multi_turn", "messages": messages, "target": {"content": a}, "check": {"value": v}}

    def convo_prose(self):
        r = self.r
        kind = r.randint(0, 5)
        if kind == 0:
            q = self.pick(["Hello!", "Hi", "Hey there", "Good morning!", "Hello, who are you?"])
            a = "Hello! I am gpumesh mini-chat, a small model. I can do arithmetic, unit conversions, dates, look things up in text you give me, write JSON and call tools."
        elif kind == 1:
            q = self.pick(["Who are you?", "What are you?", "What can you do?"])
            a = "I am gpumesh mini-chat, a small model trained on generated data. I can do arithmetic, unit conversions, dates, look things up in text you give me, write JSON and call tools."
        elif kind == 2:
            animal, color = self.pick(ANIMALS), self.pick(COLORS)
            q = f"Write a sentence about a {color} {animal}."
            a = self.pick([f"The {color} {animal} rested quietly in the sun.", f"A {color} {animal} walked slowly across the field.", f"Everyone noticed the {color} {animal} by the river."])
        elif kind == 3:
            n = r.randint(2, 5)
            fruits = r.sample(FRUITS, n)
            q = f"List {n} fruits."
            a = "\n".join(f"{i + 1}. {f.capitalize()}" for i, f in enumerate(fruits))
        elif kind == 4:
            word = self.pick(ANIMALS + FRUITS + ITEMS)
            q = self.pick([f"Say the word {word}.", f"Repeat after me: {word}", f"Reply with just: {word}"])
            a = word
        else:
            name, city = self.pick(NAMES), self.pick(CITIES)
            q = f"Write a short greeting to {name} from {city}."
            a = f"Hello {name}! Warm greetings from {city}."
        return {"task": "prose", "messages": self.system_maybe() + [{"role": "user", "content": q}], "target": {"content": a}, "check": {"prose": True}}

    def convo_copy(self):
        """Words, names or numbers repeated exactly: what teaches a small model to copy from its prompt."""
        r = self.r
        pool = self.pick([NAMES, CITIES, ANIMALS + FRUITS + ITEMS + COLORS, None])
        n = r.randint(2, 8)
        items = [str(r.randint(0, 999)) for _ in range(n)] if pool is None else [self.pick(pool) for _ in range(n)]
        text = self.pick([" ".join(items), ", ".join(items)])
        q = self.pick([f"Repeat after me: {text}", f"Say exactly this: {text}", f"Copy this: {text}", f"Repeat: {text}"])
        return {"task": "copy", "messages": self.system_maybe() + [{"role": "user", "content": q}], "target": {"content": text}, "check": {"contains": text}}

    def conversation(self):
        if self.copy_share and self.r.random() < self.copy_share:
            return self.convo_copy()
        k = self.r.random()
        if self.emphasis:
            # exact 0.40, JSON 0.12, tool call 0.16, tool result 0.12, no tool 0.04, multi-turn 0.12, prose 0.04
            k = self.r.random()
            for share, make in ((0.40, self.convo_exact), (0.12, self.convo_json), (0.16, self.convo_tool_call), (0.12, self.convo_tool_result), (0.04, self.convo_no_tool), (0.12, self.convo_multi_turn)):
                if k < share:
                    return make()
                k -= share
            return self.convo_prose()
        if k < 0.34:
            return self.convo_exact()
        if k < 0.50:
            return self.convo_json()
        if k < 0.66:
            return self.convo_tool_call()
        if k < 0.76:
            return self.convo_tool_result()
        if k < 0.80:
            return self.convo_no_tool()
        if k < 0.92:
            return self.convo_multi_turn()
        return self.convo_prose()


def prompt_key(c):
    return json.dumps([c["messages"], c.get("tools")], sort_keys=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".train")
    ap.add_argument("--train", type=int, default=60000)
    ap.add_argument("--test", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--copy-share", type=float, default=0.0, help="share of copy-this conversations (the second stage's)")
    ap.add_argument("--emphasis", action="store_true", help="weight the training mix toward the tasks learned slowest")
    ap.add_argument("--exclude", default="", help="a test set (jsonl) whose prompts the training set must not contain")
    args = ap.parse_args()
    import os

    os.makedirs(args.out, exist_ok=True)
    train = Gen(args.seed, args.copy_share, args.emphasis)
    excluded = {prompt_key(json.loads(line)) for line in open(args.exclude)} if args.exclude else set()
    seen = set()
    with open(f"{args.out}/train.jsonl", "w") as f:
        written = 0
        while written < args.train:
            c = train.conversation()
            if prompt_key(c) in excluded:
                continue
            seen.add(prompt_key(c))
            f.write(json.dumps(c) + "\n")
            written += 1
    test = Gen(args.seed + 1_000_003)
    kept = 0
    with open(f"{args.out}/test.jsonl", "w") as f:
        while kept < args.test:
            c = test.conversation()
            if prompt_key(c) in seen:
                continue
            f.write(json.dumps(c) + "\n")
            kept += 1
    print(f"{args.train} training and {kept} test conversations in {args.out}")


if __name__ == "__main__":
    main()
